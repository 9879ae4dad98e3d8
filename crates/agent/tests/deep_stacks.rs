//! `depth=` above what the asynchronous sampler's ring had room for: honoured up to 16,384
//! frames (the ring has fewer slots for deep stacks), cut beyond with an `HPROF WARNING` at
//! start (`java/src/DeepStack.java`).

use crate::support::{JavaRun, TextProfile, jdk17, jdks, profile, read_text, text_output};

/// Runs DeepStack `frames` deep for 2 s under `options`; the run and the longest trace of the
/// "deep" thread (in frames, and how many of them are `DeepStack.down`).
fn deepest(jdk_version: u32, options: &str, frames: u32) -> (JavaRun, usize, usize) {
    let jdk = jdks()
        .into_iter()
        .find(|j| j.version == jdk_version)
        .unwrap_or_else(jdk17);
    let (run, dir) = profile(&jdk, options, "DeepStack", &[&frames.to_string(), "2"]);
    assert_eq!(
        run.code,
        Some(0),
        "JDK {jdk_version} {options}: {}",
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let deep = p.thread("deep").expect("the deep thread");
    // (`depth=` counts Java frames: a sample taken in the kernel, in the JVM or in a stub
    // has the kernel's, native and stub frames on top, `lib.function(Native method)`,
    // `[kernel].function(Kernel)`, which have no colon in their parentheses.)
    let walked = |frames: &[String]| {
        frames
            .iter()
            .filter(|f| f.rsplit_once('(').is_some_and(|(_, at)| at.contains(':')))
            .count()
    };
    let longest = p
        .traces
        .values()
        .filter(|t| t.thread == Some(deep))
        .max_by_key(|t| walked(&t.frames))
        .expect("a trace of the deep thread");
    let down = longest
        .frames
        .iter()
        .filter(|f| f.starts_with("DeepStack.down("))
        .count();
    (run, walked(&longest.frames), down)
}

#[test]
fn a_depth_above_512_frames_is_honoured() {
    for jdk in jdks() {
        for mode in ["cpu=samples", "cpu=wall"] {
            let options = format!("{mode},depth=3000,thread=y");
            let (run, frames, down) = deepest(jdk.version, &options, 2_500);
            // spin(), 2,501 frames of down(), the lambda, run(), and a wall sample's state.
            assert!(
                down >= 2_500 && frames >= 2_503,
                "JDK {} {mode}: {frames} frames, {down} of down()",
                jdk.version
            );
            assert!(
                !run.stderr.contains("HPROF WARNING: depth="),
                "{}",
                run.stderr
            );
        }
    }
}

#[test]
fn a_depth_beyond_what_the_ring_holds_is_cut_with_a_warning() {
    let (run, frames, _) = deepest(17, "cpu=samples,depth=20000,thread=y", 17_000);
    assert!(
        run.stderr.contains(
            "HPROF WARNING: depth=20000: cpu=samples and cpu=wall keep the 16384 innermost frames of each stack"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(frames, 16_384);
}
