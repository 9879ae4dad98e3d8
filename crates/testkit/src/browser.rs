//! One probe for tests that load a page in headless Chromium: injects a script that waits for
//! the page (and its frames) to load and for a condition the test gives, runs the test's
//! JavaScript, and hands back its result, the page's script errors and Chromium's log.

use std::path::Path;

use crate::java::chromium_dom;

/// What a probe's script returned, with what went wrong on the page while it loaded.
#[derive(Debug)]
pub struct Probe {
    /// The string the probe's body returned, HTML entities decoded (`"exception …"` when the
    /// body threw).
    pub result: String,
    /// Script errors of the page and of its frames, in the order seen (the page's own `error`
    /// events, its frames' `error` events once they loaded, and the uncaught errors Chromium
    /// logged for any frame), without repeats.
    pub errors: Vec<String>,
    /// What Chromium printed on stderr (console messages included).
    pub log: String,
}

/// Readiness of a flame graph page (crates/profile's flame.rs) for a probe: its callees view
/// has loaded and drawn its frames.
pub const FLAME_CALLEES_DRAWN: &str = r##"(function (d) { return d.readyState === "complete" && d.querySelectorAll("#frames > g").length > 0; })(document.getElementById("callees").contentWindow.document)"##;

/// How many times (every 100 ms of the page's virtual time) the probe checks `ready` after the
/// page's `load` event before giving up: 4 s, within `chromium_dom`'s 5 s budget.
const POLLS: u32 = 40;

/// Loads a copy of `page` in headless Chromium with a probe: after the window's `load` event,
/// the probe evaluates the JavaScript expression `ready` every 100 ms of virtual time (up to
/// 4 s) until it is true, then runs `body` (a function body whose `return` value, made a
/// string, is the result). Panics, with the page's console log, when the page never became
/// ready or the probe never ran.
pub fn probe(page: &Path, ready: &str, body: &str) -> Probe {
    let html = std::fs::read_to_string(page)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", page.display()));
    let script = format!(
        r##"<script>
(function () {{
  var errors = [];
  function watch(w) {{
    try {{ w.addEventListener("error", function (e) {{ errors.push(String(e.message)); }}); }} catch (e) {{}}
  }}
  watch(window);
  window.addEventListener("load", function () {{
    Array.from(document.getElementsByTagName("iframe")).forEach(function (f) {{ watch(f.contentWindow); }});
    var polls = 0;
    function isReady() {{ try {{ return !!({ready}); }} catch (e) {{ return false; }} }}
    function step() {{
      var ok = isReady();
      if (!ok && ++polls < {POLLS}) {{ setTimeout(step, 100); return; }}
      var result = "";
      if (ok) {{
        try {{ result = String((function () {{ {body} }})()); }} catch (e) {{ result = "exception " + e; }}
      }}
      document.title = "PROBE|" + (ok ? "ready" : "never ready") + "|" +
        encodeURIComponent(errors.join("\n")) + "|" + result;
    }}
    step();
  }});
}})();
</script></body>"##
    );
    assert!(
        html.contains("</body>"),
        "{} has no </body> to put the probe before",
        page.display()
    );
    let probed = page.with_extension("probed.html");
    std::fs::write(&probed, html.replacen("</body>", &script, 1)).unwrap();
    let (dom, log) = chromium_dom(&probed);
    let title = dom
        .split("<title>PROBE|")
        .nth(1)
        .and_then(|r| r.split("</title>").next())
        .unwrap_or_else(|| {
            panic!(
                "the probe never ran on {} (the page did not load, or its `load` event never \
                 fired within the virtual-time budget)\nChromium's log:\n{log}\nDOM (start):\n{}",
                page.display(),
                &dom[..dom.floor_char_boundary(2000)]
            )
        });
    let title = decode_entities(title);
    let mut fields = title.splitn(3, '|');
    let state = fields.next().unwrap_or_default();
    let mut errors: Vec<String> = percent_decode(fields.next().unwrap_or_default())
        .split('\n')
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect();
    let result = fields.next().unwrap_or_default().to_string();
    for line in log.lines() {
        if let Some(at) = line.find("Uncaught ") {
            let message = line[at..].trim_end_matches(['"', ' ']).to_string();
            if !errors.iter().any(|e| message.contains(e.as_str())) {
                errors.push(message);
            }
        }
    }
    assert_eq!(
        state,
        "ready",
        "{} never became ready ({ready}) within {POLLS} polls of 100 ms after its load event; \
         script errors: {errors:?}\nChromium's log:\n{log}",
        page.display()
    );
    Probe {
        result,
        errors,
        log,
    }
}

/// `text` with the entities Chromium's DOM dump writes in text (`&amp;`, `&lt;`, `&gt;`,
/// `&quot;`, `&#39;`, `&nbsp;`, numeric references) decoded.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let entity = rest.find(';').map(|end| &rest[1..end]);
        let decoded = match entity {
            Some("amp") => Some('&'),
            Some("lt") => Some('<'),
            Some("gt") => Some('>'),
            Some("quot") => Some('"'),
            Some("apos") => Some('\''),
            Some("nbsp") => Some('\u{a0}'),
            Some(e) if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16)
                    .ok()
                    .and_then(char::from_u32)
            }
            Some(e) if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match (decoded, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` (from JavaScript's `encodeURIComponent`) with its `%XX` escapes decoded as UTF-8.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_and_escapes_decode() {
        assert_eq!(
            decode_entities("a &lt;init&gt; &amp;&amp; &#39;x&#x27; &bogus b&"),
            "a <init> && 'x' &bogus b&"
        );
        assert_eq!(percent_decode("a%20b%0Ac%E2%80%94%"), "a b\nc\u{2014}%");
    }

    /// The probe sees an error thrown in a frame while it loaded, waits for a condition that
    /// only a late timer makes true, and fails clearly when the page never becomes ready.
    #[test]
    fn the_probe_waits_for_readiness_and_reports_frame_errors() {
        if crate::require::chromium(crate::require::Skipped::Test).is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("page.html");
        std::fs::write(
            &page,
            r#"<html><head><title>t</title></head><body>
<iframe id="f" srcdoc="<script>missing_function_in_frame()</script>"></iframe>
<script>setTimeout(function () { window.late = "a &lt; b"; }, 2000);</script>
</body></html>"#,
        )
        .unwrap();
        let probe = probe(&page, "window.late", "return window.late + '|' + 1;");
        assert_eq!(probe.result, "a &lt; b|1");
        assert!(
            probe
                .errors
                .iter()
                .any(|e| e.contains("missing_function_in_frame")),
            "{probe:?}"
        );
        let never = std::panic::catch_unwind(|| probe_never_ready(&page));
        let message = *never.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("never became ready"), "{message}");
    }

    fn probe_never_ready(page: &Path) -> Probe {
        probe(page, "window.never", "return 1;")
    }
}
