//! Owns the agent's option string: parsing it exactly as the original HPROF did, its error
//! messages, the `help` text and the `force=n` output naming.

use std::fmt;
use std::path::{Path, PathBuf};

/// Default stack trace depth.
pub const DEFAULT_DEPTH: u32 = 4;
/// Default sampling interval in milliseconds.
pub const DEFAULT_INTERVAL_MS: u32 = 10;
/// Default cutoff ratio for SITES, CPU and MONITOR TIME listings.
pub const DEFAULT_CUTOFF: f64 = 0.0001;
/// Default text output file.
pub const DEFAULT_TEXT_FILE: &str = "java.hprof.txt";
/// Default binary output file.
pub const DEFAULT_BINARY_FILE: &str = "java.hprof";
/// Default JFR output file.
pub const DEFAULT_JFR_FILE: &str = "java.jfr";
/// Default size of a JFR chunk (`chunk=`), the most the agent holds of a recording.
pub const DEFAULT_CHUNK_BYTES: u64 = 12 << 20;
/// Option names are read into a 16-byte buffer in the original: longer ones are syntax errors.
const MAX_NAME_LEN: usize = 15;
/// The longest value the original accepts (`FILENAME_MAX`).
const MAX_VALUE_LEN: usize = 4096;

/// Text (`format=a`) or binary (`format=b`) output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `java.hprof.txt` layout.
    Text,
    /// HPROF binary, `JAVA PROFILE 1.0.2`.
    Binary,
    /// A JDK Flight Recorder recording (`format=jfr`, or a `file=` ending in `.jfr`).
    Jfr,
}

/// When a JFR recording's chunk ends and the next begins (`chunk=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// When the chunk holds this many bytes (`chunk=12m`).
    Bytes(u64),
    /// When the chunk spans this many seconds (`chunk=60s`, `chunk=10min`, `chunk=1h`).
    Seconds(u64),
}

/// Where output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A file (`file=`, or the default name).
    File(PathBuf),
    /// A TCP connection to a front-end (`net=host:port`).
    Net {
        /// Host name or address.
        host: String,
        /// Port, 1 to 65535.
        port: u16,
    },
}

/// How `cpu=samples` takes stacks (`sampler=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampler {
    /// `sampler=async` (the default): a signal per interval of each thread's CPU time, the
    /// stack taken where the thread is, with AsyncGetCallTrace.
    Async,
    /// `sampler=jvmti`: an agent thread asks the JVM for the stacks of the threads that used
    /// CPU time since the last tick (stacks taken at safepoints).
    Jvmti,
}

/// What interrupts threads for `cpu=samples` under the asynchronous sampler (`timer=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// `timer=auto` (the default): perf events where the kernel allows them, else POSIX
    /// timers on the threads' CPU clocks, else the process-wide `ITIMER_PROF`.
    Auto,
    /// `timer=perf`: a perf event on each thread's task clock (falls back as `auto` does).
    Perf,
    /// `timer=cpu`: a POSIX timer on each thread's CPU clock (else `ITIMER_PROF`).
    Cpu,
    /// `timer=itimer`: the process-wide `ITIMER_PROF`.
    Itimer,
}

/// What `hprof attach` asks of the agent it loads into a running JVM (`session=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    /// Start profiling with the other options (the default).
    Start,
    /// Dump what was collected so far; profiling goes on.
    Dump,
    /// Dump, then stop profiling and release everything.
    Stop,
    /// Say what is running.
    Status,
}

/// Every option, after parsing and the original's post-processing.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The full option string, command line and `_JAVA_HPROF_OPTIONS` part.
    pub text: String,
    /// `heap=dump` or `heap=all`.
    pub heap_dump: bool,
    /// `heap=sites` or `heap=all`.
    pub heap_sites: bool,
    /// `cpu=samples` or `cpu=y`.
    pub cpu_samples: bool,
    /// `cpu=wall`: every thread sampled by wall time, whatever its state.
    pub cpu_wall: bool,
    /// `sampler=`: how `cpu=samples` takes stacks.
    pub sampler: Sampler,
    /// `timer=`: what interrupts threads for `cpu=samples` (asynchronous sampler).
    pub timer: Timer,
    /// `session=`: what `hprof attach` asks of an agent loaded into a running JVM.
    pub session: Session,
    /// `reply=`: where an attached agent writes its answer for `hprof attach`.
    pub reply: Option<String>,
    /// `cpu=times` (or `cpu=old`, which times methods too).
    pub cpu_times: bool,
    /// `cpu=old`: cpu=times data in the old prof layout.
    pub cpu_old: bool,
    /// `monitor=y`.
    pub monitor: bool,
    /// `format=`.
    pub format: Format,
    /// `chunk=`: when `format=jfr` starts a new chunk.
    pub chunk: Chunk,
    /// `file=` or `net=`, or the default file.
    pub output: Output,
    /// Whether `file=` or `net=` was given.
    pub output_given: bool,
    /// `depth=`: frames per trace (forced to 2 by `cpu=old`).
    pub depth: u32,
    /// `interval=`: milliseconds between CPU samples.
    pub interval_ms: u32,
    /// `cutoff=`.
    pub cutoff: f64,
    /// `lineno=`.
    pub lineno: bool,
    /// `thread=`.
    pub thread: bool,
    /// `native=`: native frames (JNI libraries, libc, the JVM) in `cpu=samples` and
    /// `cpu=wall` stacks, above the Java frames that called them.
    pub native: bool,
    /// `vmthreads=`: `cpu=samples` samples the threads that never run Java too (the
    /// garbage collector's, the JIT compiler's).
    pub vm_threads: bool,
    /// `doe=`: dump at VM death.
    pub doe: bool,
    /// `msa=`: Solaris micro-state accounting; accepted, nothing to do on Linux.
    pub msa: bool,
    /// `force=`.
    pub force: bool,
    /// `verbose=`.
    pub verbose: bool,
    /// `alloc_interval=`: 0 tracks every allocation, else the mean sampling interval in bytes.
    pub alloc_interval: u64,
    /// `sites=exact`: heap=sites sees every allocation as a JVMTI event and tags every object
    /// (exact live counts, slow); `sites=fast` (the default) counts allocations in the
    /// allocating bytecode and estimates live objects from sampled ones.
    pub sites_exact: bool,
    /// `gc_okay=`: obsolete, accepted and ignored.
    pub gc_okay: bool,
    /// `primfields=`, `primarrays=`: accepted; dumps always hold primitive data.
    pub primfields: bool,
    /// See `primfields`.
    pub primarrays: bool,
    /// `logflags=`, `debugflags=`, `X=`: accepted, ignored.
    pub logflags: i64,
    /// See `logflags`.
    pub debugflags: i64,
    /// See `logflags`.
    pub x: i64,
    /// `coredump=`, `errorexit=`, `pause=`, `debug=`: accepted, ignored.
    pub coredump: bool,
    /// See `coredump`.
    pub errorexit: bool,
    /// See `coredump`.
    pub pause: bool,
    /// See `coredump`.
    pub debug: bool,
}

/// What the option string asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// Exactly `help`: print [`help_text`] and exit 0.
    Help,
    /// Profile with these options.
    Run(Options),
}

/// An option error: the description and the option string it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// What is wrong, in the original's words.
    pub description: String,
    /// The full option string.
    pub options: String,
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}hprof option error: {} ({})",
            crate::error::PREFIX,
            self.description,
            self.options
        )
    }
}

impl std::error::Error for OptionError {}

impl Options {
    fn defaults(text: &str) -> Options {
        Options {
            text: text.to_string(),
            heap_dump: false,
            heap_sites: false,
            cpu_samples: false,
            cpu_wall: false,
            sampler: Sampler::Async,
            timer: Timer::Auto,
            session: Session::Start,
            reply: None,
            cpu_times: false,
            cpu_old: false,
            monitor: false,
            format: Format::Text,
            chunk: Chunk::Bytes(DEFAULT_CHUNK_BYTES),
            output: Output::File(PathBuf::from(DEFAULT_TEXT_FILE)),
            output_given: false,
            depth: DEFAULT_DEPTH,
            interval_ms: DEFAULT_INTERVAL_MS,
            cutoff: DEFAULT_CUTOFF,
            lineno: true,
            thread: false,
            native: true,
            vm_threads: false,
            doe: true,
            msa: false,
            force: true,
            verbose: true,
            alloc_interval: 0,
            sites_exact: false,
            gc_okay: true,
            primfields: true,
            primarrays: true,
            logflags: 0,
            debugflags: 0,
            x: 0,
            coredump: false,
            errorexit: false,
            pause: false,
            debug: false,
        }
    }

    /// Parses the agent's option string (`opts` from the command line, `env` from
    /// `_JAVA_HPROF_OPTIONS`, appended after a comma).
    pub fn parse(opts: &str, env: Option<&str>) -> Result<Parsed, OptionError> {
        let text = match env.filter(|e| !e.is_empty()) {
            Some(env) if !opts.is_empty() => format!("{opts},{env}"),
            Some(env) => env.to_string(),
            None => opts.to_string(),
        };
        if text == "help" {
            return Ok(Parsed::Help);
        }
        let mut o = Options::defaults(&text);
        let error = |description: &str| OptionError {
            description: description.to_string(),
            options: text.clone(),
        };
        let mut file: Option<String> = None;
        let mut net: Option<(String, u16)> = None;
        let mut format_given = false;
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let name = token(&mut rest, '=', MAX_NAME_LEN)
                .ok_or_else(|| error("general syntax error parsing options"))?;
            let value = token(&mut rest, ',', MAX_VALUE_LEN);
            let boolean = |value: Option<&str>| match value {
                Some("y") => Ok(true),
                Some("n") => Ok(false),
                _ => Err(error(&format!("{name} option value must be y|n"))),
            };
            match name {
                "file" | "net" => {
                    if file.is_some() || net.is_some() {
                        return Err(error("file or net options should only appear once"));
                    }
                    if name == "file" {
                        file = Some(
                            value
                                .ok_or_else(|| error("syntax error parsing file=filename"))?
                                .to_string(),
                        );
                    } else {
                        let value = value.ok_or_else(|| error("net option missing ':'"))?;
                        // `[v6-address]:port` for IPv6, else `host:port` as in the original.
                        let (host, port) =
                            match value.strip_prefix('[').and_then(|v| v.split_once(']')) {
                                Some((host, rest)) => (
                                    host,
                                    rest.strip_prefix(':')
                                        .ok_or_else(|| error("net option missing ':'"))?,
                                ),
                                None => value
                                    .split_once(':')
                                    .ok_or_else(|| error("net option missing ':'"))?,
                            };
                        if port.is_empty() {
                            return Err(error("net option missing port"));
                        }
                        let port = c_strtol(port, 10)
                            .filter(|p| (1..=65535).contains(p))
                            .ok_or_else(|| {
                                error("net option port must be a number from 1 to 65535")
                            })?;
                        net = Some((host.to_string(), port as u16));
                    }
                }
                "format" => {
                    format_given = true;
                    o.format = match value {
                        None => return Err(error("syntax error parsing format=a|b|jfr")),
                        Some("a") => Format::Text,
                        Some("b") => Format::Binary,
                        Some("jfr") => Format::Jfr,
                        Some(_) => return Err(error("format option value must be a|b|jfr")),
                    }
                }
                "chunk" => {
                    o.chunk = value.and_then(parse_chunk).ok_or_else(|| {
                        error("chunk option value must be a size (16m, 1g) or a time (60s, 10min, 1h) above 0")
                    })?;
                }
                "depth" => {
                    let v = value.ok_or_else(|| error("syntax error parsing depth=DECIMAL"))?;
                    o.depth = c_strtol(v, 10)
                        .filter(|&d| d >= 0)
                        .and_then(|d| u32::try_from(d).ok())
                        .ok_or_else(|| error("depth option value must be decimal and >= 0"))?;
                }
                "interval" => {
                    let v = value.ok_or_else(|| error("syntax error parsing interval=DECIMAL"))?;
                    o.interval_ms = c_strtol(v, 10)
                        .filter(|&d| d > 0)
                        .and_then(|d| u32::try_from(d).ok())
                        .ok_or_else(|| error("interval option value must be decimal and > 0"))?;
                }
                "cutoff" => {
                    let v = value.ok_or_else(|| error("syntax error parsing cutoff=DOUBLE"))?;
                    o.cutoff = c_strtod(v).filter(|c| *c >= 0.0).ok_or_else(|| {
                        error("cutoff option value must be floating point and >= 0")
                    })?;
                }
                "cpu" => match value {
                    None => {
                        return Err(error("syntax error parsing cpu=y|samples|wall|times|old"));
                    }
                    Some("y" | "samples") => o.cpu_samples = true,
                    Some("wall") => o.cpu_wall = true,
                    Some("times") => o.cpu_times = true,
                    Some("old") => {
                        o.cpu_times = true;
                        o.cpu_old = true;
                    }
                    Some(_) => {
                        return Err(error("cpu option value must be y|samples|wall|times|old"));
                    }
                },
                "heap" => match value {
                    None => return Err(error("syntax error parsing heap=dump|sites|all")),
                    Some("dump") => o.heap_dump = true,
                    Some("sites") => o.heap_sites = true,
                    Some("all") => {
                        o.heap_dump = true;
                        o.heap_sites = true;
                    }
                    Some(_) => return Err(error("heap option value must be dump|sites|all")),
                },
                "sampler" => {
                    o.sampler = match value {
                        Some("async") => Sampler::Async,
                        Some("jvmti") => Sampler::Jvmti,
                        None => return Err(error("syntax error parsing sampler=async|jvmti")),
                        Some(_) => return Err(error("sampler option value must be async|jvmti")),
                    }
                }
                "timer" => {
                    o.timer = match value {
                        Some("auto") => Timer::Auto,
                        Some("perf") => Timer::Perf,
                        Some("cpu") => Timer::Cpu,
                        Some("itimer") => Timer::Itimer,
                        None => {
                            return Err(error("syntax error parsing timer=auto|perf|cpu|itimer"));
                        }
                        Some(_) => {
                            return Err(error("timer option value must be auto|perf|cpu|itimer"));
                        }
                    }
                }
                "session" => {
                    o.session = match value {
                        Some("start") => Session::Start,
                        Some("dump") => Session::Dump,
                        Some("stop") => Session::Stop,
                        Some("status") => Session::Status,
                        _ => {
                            return Err(error(
                                "session option value must be start|dump|stop|status",
                            ));
                        }
                    }
                }
                "reply" => {
                    o.reply = Some(
                        value
                            .filter(|v| !v.is_empty())
                            .ok_or_else(|| error("syntax error parsing reply=FILENAME"))?
                            .to_string(),
                    );
                }
                "lineno" => o.lineno = boolean(value)?,
                "thread" => o.thread = boolean(value)?,
                "native" => o.native = boolean(value)?,
                "vmthreads" => o.vm_threads = boolean(value)?,
                "doe" => o.doe = boolean(value)?,
                "msa" => o.msa = boolean(value)?,
                "force" => o.force = boolean(value)?,
                "verbose" => o.verbose = boolean(value)?,
                "monitor" => o.monitor = boolean(value)?,
                "gc_okay" => o.gc_okay = boolean(value)?,
                "primfields" => o.primfields = boolean(value)?,
                "primarrays" => o.primarrays = boolean(value)?,
                "coredump" => o.coredump = boolean(value)?,
                "errorexit" => o.errorexit = boolean(value)?,
                "pause" => o.pause = boolean(value)?,
                "debug" => o.debug = boolean(value)?,
                "logflags" | "debugflags" | "X" => {
                    let n = value
                        .and_then(|v| c_strtol(v, 0))
                        .ok_or_else(|| error(&format!("{name} option value must be numeric")))?;
                    match name {
                        "logflags" => o.logflags = n,
                        "debugflags" => o.debugflags = n,
                        _ => o.x = n,
                    }
                }
                "exitpause" => {
                    return Err(error(
                        "The exitpause option was removed, use -XX:OnError='cmd %%p'",
                    ));
                }
                "precrash" => {
                    return Err(error(
                        "The precrash option was removed, use -XX:OnError='precrash -p %%p'",
                    ));
                }
                "sites" => match value {
                    Some("exact") => o.sites_exact = true,
                    Some("fast") => o.sites_exact = false,
                    _ => return Err(error("sites option value must be exact|fast")),
                },
                "alloc_interval" => {
                    o.alloc_interval = value.and_then(parse_bytes).ok_or_else(|| {
                        error("alloc_interval option value must be a byte count >= 0, optionally with k, m or g")
                    })?;
                }
                _ => return Err(error(&format!("Unknown option: {name}"))),
            }
        }
        // A file named *.jfr is a JFR recording unless format= says otherwise.
        if !format_given
            && file
                .as_deref()
                .is_some_and(|f| f.to_ascii_lowercase().ends_with(".jfr"))
        {
            o.format = Format::Jfr;
        }
        if o.format == Format::Binary && o.cpu_times {
            return Err(error("cpu=times|old is not supported with format=b"));
        }
        if o.format == Format::Jfr && o.cpu_old {
            return Err(error("cpu=old is not supported with format=jfr"));
        }
        if o.format == Format::Jfr && o.heap_dump {
            return Err(error(
                "heap=dump|all is not supported with format=jfr (a heap dump is an HPROF binary file: use format=b)",
            ));
        }
        if o.format == Format::Binary && o.monitor {
            return Err(error("monitor=y is not supported with format=b"));
        }
        if o.cpu_wall && o.cpu_samples {
            return Err(error("cpu=wall cannot be used with cpu=samples"));
        }
        if o.cpu_old {
            o.depth = 2;
        }
        if !(o.cpu_samples || o.cpu_wall || o.cpu_times || o.monitor || o.heap_dump || o.heap_sites)
        {
            if o.format == Format::Jfr {
                // A recording's use is time: CPU samples by default.
                o.cpu_samples = true;
            } else {
                o.heap_dump = true;
                o.heap_sites = true;
            }
        }
        o.output_given = file.is_some() || net.is_some();
        o.output = match (file, net) {
            (_, Some((host, port))) => Output::Net { host, port },
            (Some(file), None) => Output::File(PathBuf::from(file)),
            (None, None) => Output::File(PathBuf::from(match o.format {
                Format::Text => DEFAULT_TEXT_FILE,
                Format::Binary => DEFAULT_BINARY_FILE,
                Format::Jfr => DEFAULT_JFR_FILE,
            })),
        };
        Ok(Parsed::Run(o))
    }
}

/// Takes the text up to `sep` (or the end) from `rest` and moves past the separator. Like the
/// original's tokenizer, an empty token or one longer than `max` is a failure (`None`).
fn token<'a>(rest: &mut &'a str, sep: char, max: usize) -> Option<&'a str> {
    let (tok, tail) = match rest.find(sep) {
        Some(i) => (&rest[..i], &rest[i + sep.len_utf8()..]),
        None => (*rest, ""),
    };
    *rest = tail;
    (!tok.is_empty() && tok.len() <= max).then_some(tok)
}

/// C's `strtol` over a whole string: leading white space, an optional sign, digits in `base`
/// (0 = decimal, `0x` hex or `0` octal); anything left over, or no digits, is `None`.
fn c_strtol(s: &str, base: u32) -> Option<i64> {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match base {
        0 if digits.starts_with("0x") || digits.starts_with("0X") => (16, &digits[2..]),
        0 if digits.starts_with('0') && digits.len() > 1 => (8, &digits[1..]),
        0 => (10, digits),
        b => (b, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = i64::from_str_radix(digits, radix).ok()?;
    Some(if negative { -n } else { n })
}

/// C's `strtod` over a whole string (decimal and exponent forms, `inf`); NaN is refused.
fn c_strtod(s: &str) -> Option<f64> {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    s.parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// `chunk=`: a time (`60s`, `10min`, `1h`) or a byte count (`16m`, `1g`), above 0.
fn parse_chunk(s: &str) -> Option<Chunk> {
    let lower = s.to_ascii_lowercase();
    let time = [("min", 60), ("h", 3600), ("s", 1)]
        .iter()
        .find_map(|&(suffix, scale)| {
            let digits = lower.strip_suffix(suffix)?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse::<u64>().ok()?.checked_mul(scale))
                .flatten()
        });
    match time {
        Some(0) => None,
        Some(seconds) => Some(Chunk::Seconds(seconds)),
        None => parse_bytes(s).filter(|&b| b > 0).map(Chunk::Bytes),
    }
}

/// A byte count with an optional `k`, `m` or `g` suffix (powers of 1024).
fn parse_bytes(s: &str) -> Option<u64> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        b'g' | b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// The name `force=n` writes to when `path` already exists, as the original chose it: the
/// process id goes before a trailing `.txt` (text), or is appended (`.<pid>.txt` for other
/// text names, `.<pid>` for binary). Returns `path` itself when it does not exist.
pub fn unique_output_name(
    path: &Path,
    format: Format,
    pid: u32,
    exists: impl Fn(&Path) -> bool,
) -> PathBuf {
    if !exists(path) {
        return path.to_path_buf();
    }
    let name = path.to_string_lossy();
    let unique = match format {
        Format::Binary => format!("{name}.{pid}"),
        Format::Jfr => match name.rfind('.') {
            Some(dot) if name[dot..].eq_ignore_ascii_case(".jfr") => {
                format!("{}.{pid}{}", &name[..dot], &name[dot..])
            }
            _ => format!("{name}.{pid}.jfr"),
        },
        Format::Text => match name.rfind('.') {
            Some(dot) if name[dot..].to_ascii_lowercase().starts_with(".txt") => {
                format!("{}.{pid}{}", &name[..dot], &name[dot..])
            }
            _ => format!("{name}.{pid}.txt"),
        },
    };
    PathBuf::from(unique)
}

/// The text `help` prints: the original's option table, examples and notes (the interface
/// users and scripts know), with hprof-rs's title, its new `alloc_interval` option and
/// warnings that say what is true of hprof-rs.
pub fn help_text() -> &'static str {
    HELP
}

const HELP: &str = "
     HPROF: Heap and CPU Profiling Agent (hprof-rs, JVMTI)

hprof usage: java -agentlib:hprof=[help]|[<option>=<value>, ...]

Option Name and Value  Description                    Default
---------------------  -----------                    -------
heap=dump|sites|all    heap profiling                 all
cpu=samples|times|old  CPU usage                      off
cpu=wall               all threads by wall time       off
sampler=async|jvmti    how cpu=samples takes stacks   async
timer=<source>         perf|cpu|itimer: what samples  auto
monitor=y|n            monitor contention             n
format=a|b|jfr         text(txt), binary or JFR       a
file=<file>            write data to file             java.hprof[{.txt}]
chunk=<size>|<time>    format=jfr: chunk size or time 12m
net=<host>:<port>      send data over a socket        off
depth=<size>           stack trace depth              4
interval=<ms>          sample interval in ms          10
cutoff=<value>         output cutoff point            0.0001
lineno=y|n             line number in traces?         y
thread=y|n             thread in traces?              n
native=y|n             native frames in cpu samples   y
vmthreads=y|n          sample GC and JIT threads too  n
doe=y|n                dump on exit?                  y
msa=y|n                Solaris micro state accounting n
force=y|n              force output to <file>         y
verbose=y|n            print messages about dumps     y
alloc_interval=<bytes> sample heap=sites every ~bytes 0 (exact)
sites=exact|fast       heap=sites: tag every object?  fast

Obsolete Options
----------------
gc_okay=y|n

Examples
--------
  - Get sample cpu information every 20 millisec, with a stack depth of 3:
      java -agentlib:hprof=cpu=samples,interval=20,depth=3 classname
  - Get heap usage information based on the allocation sites:
      java -agentlib:hprof=heap=sites classname

Notes
-----
  - The option format=b cannot be used with monitor=y.
  - The option format=b cannot be used with cpu=old|times.
  - The option format=jfr cannot be used with heap=dump|all or cpu=old.
  - Use of the -Xrunhprof interface can still be used, e.g.
       java -Xrunhprof:[help]|[<option>=<value>, ...]
    will behave exactly the same as:
       java -agentlib:hprof=[help]|[<option>=<value>, ...]

Warnings
--------
  - hprof-rs re-implements the JDK's former HPROF agent for JDK 11 and later;
    its output formats follow the original's. Where it deliberately differs
    (CPU samples count only threads using the CPU, live objects are counted
    after a full GC, ...), docs/compatibility.md says so.
  - Option alloc_interval is new in hprof-rs: 0 tracks every allocation,
    a byte count samples allocations at about that interval.
  - Option sites is new in hprof-rs: fast counts allocations exactly in the
    allocating bytecode and estimates live objects from sampled ones; exact
    makes every allocation an event and tags every object (slow).
  - cpu=wall and sampler= are new in hprof-rs: cpu=samples takes stacks
    where threads run (AsyncGetCallTrace), sampler=jvmti at safepoints.
  - timer= is new in hprof-rs: perf events, POSIX CPU-clock timers or
    ITIMER_PROF interrupt threads for the asynchronous sampler (auto: the
    first the kernel allows, in that order).
  - native= and vmthreads= are new in hprof-rs: the asynchronous sampler
    walks HotSpot's frames itself (stubs and intrinsics included) and shows
    the native frames (JNI libraries, libc, the JVM) above the Java frames
    that called them; vmthreads=y samples the JVM's own threads too.
  - format=jfr and chunk= are new in hprof-rs: a JDK Flight Recorder recording
    (file=*.jfr chooses it too) that jfr and JMC read, every sample with its
    time; a new chunk starts after chunk= bytes or seconds, and at each dump.
  - _JAVA_HPROF_OPTIONS, if set, is appended to the options.";

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(opts: &str) -> Options {
        match Options::parse(opts, None) {
            Ok(Parsed::Run(o)) => o,
            other => panic!("{opts}: {other:?}"),
        }
    }

    fn error(opts: &str) -> String {
        match Options::parse(opts, None) {
            Err(e) => e.description,
            Ok(other) => panic!("{opts} parsed: {other:?}"),
        }
    }

    #[test]
    fn jfr_format_from_the_option_or_the_file_name_and_chunks() {
        let o = parse("file=out.jfr");
        assert_eq!(
            (o.format, o.cpu_samples, o.heap_sites),
            (Format::Jfr, true, false)
        );
        assert_eq!(o.chunk, Chunk::Bytes(DEFAULT_CHUNK_BYTES));
        assert_eq!(parse("format=b,file=out.jfr").format, Format::Binary);
        let o = parse("format=jfr,cpu=wall,chunk=30s");
        assert_eq!((o.format, o.chunk), (Format::Jfr, Chunk::Seconds(30)));
        assert_eq!(o.output, Output::File(PathBuf::from(DEFAULT_JFR_FILE)));
        assert_eq!(parse("format=jfr,chunk=2min").chunk, Chunk::Seconds(120));
        assert_eq!(parse("format=jfr,chunk=1m").chunk, Chunk::Bytes(1 << 20));
        assert!(error("format=jfr,chunk=0s").starts_with("chunk option value"));
        assert!(error("format=jfr,heap=dump").contains("format=b"));
        assert!(error("format=x").contains("a|b|jfr"));
        assert_eq!(
            unique_output_name(Path::new("p.jfr"), Format::Jfr, 7, |_| true),
            PathBuf::from("p.7.jfr")
        );
    }

    #[test]
    fn defaults_are_heap_all_to_java_hprof_txt() {
        let o = parse("");
        assert!(o.heap_dump && o.heap_sites && !o.cpu_samples && !o.cpu_times && !o.monitor);
        assert_eq!(o.output, Output::File("java.hprof.txt".into()));
        assert_eq!((o.depth, o.interval_ms, o.cutoff), (4, 10, 0.0001));
        assert!(o.lineno && !o.thread && o.doe && o.force && o.verbose && !o.msa);
        assert_eq!(parse("format=b").output, Output::File("java.hprof".into()));
        let cpu = parse("cpu=samples");
        assert!(cpu.cpu_samples && !cpu.heap_dump && !cpu.heap_sites);
    }

    #[test]
    fn help_only_when_it_is_the_whole_string() {
        assert_eq!(Options::parse("help", None), Ok(Parsed::Help));
        assert_eq!(error("cpu=samples,help"), "Unknown option: help");
        assert!(help_text().starts_with("\n     HPROF: Heap and CPU Profiling Agent"));
        assert!(
            help_text().contains("\nheap=dump|sites|all    heap profiling                 all\n")
        );
        assert!(help_text().contains("\nalloc_interval=<bytes> "));
    }

    #[test]
    fn native_frames_are_on_and_vm_threads_off_by_default() {
        let o = parse("cpu=samples");
        assert!(o.native && !o.vm_threads);
        let o = parse("cpu=samples,native=n,vmthreads=y");
        assert!(!o.native && o.vm_threads);
        assert_eq!(error("native=x"), "native option value must be y|n");
        assert_eq!(error("vmthreads=1"), "vmthreads option value must be y|n");
        assert!(
            help_text().contains("\nnative=y|n             native frames in cpu samples   y\n")
        );
    }

    #[test]
    fn heap_and_cpu_accumulate_other_options_override() {
        let o =
            parse("heap=dump,heap=sites,cpu=samples,cpu=times,depth=3,depth=7,thread=y,thread=n");
        assert!(o.heap_dump && o.heap_sites && o.cpu_samples && o.cpu_times);
        assert_eq!(o.depth, 7);
        assert!(!o.thread);
        assert!(parse("cpu=y").cpu_samples);
        let old = parse("cpu=old,depth=9");
        assert!(old.cpu_old && old.cpu_times && old.depth == 2);
    }

    #[test]
    fn values_are_checked_like_the_original() {
        assert_eq!(parse("depth=0").depth, 0);
        assert_eq!(parse("depth= 12").depth, 12);
        assert_eq!(parse("interval=1").interval_ms, 1);
        assert_eq!(parse("cutoff=1e-3").cutoff, 0.001);
        assert_eq!(parse("cutoff=0").cutoff, 0.0);
        assert_eq!(parse("logflags=0x10").logflags, 16);
        assert_eq!(parse("X=010").x, 8);
        assert_eq!(parse("alloc_interval=512k").alloc_interval, 512 * 1024);
        assert_eq!(parse("alloc_interval=100").alloc_interval, 100);
        assert!(!parse("heap=sites").sites_exact);
        assert!(parse("heap=sites,sites=exact").sites_exact);
        assert!(!parse("sites=exact,sites=fast").sites_exact);
        assert!(!parse("gc_okay=n,msa=y,primfields=n,pause=n").primfields);
        assert_eq!(
            parse("net=localhost:7777").output,
            Output::Net {
                host: "localhost".into(),
                port: 7777
            }
        );
        assert_eq!(
            parse("file=/tmp/x.txt").output,
            Output::File("/tmp/x.txt".into())
        );
        assert_eq!(
            parse("net=[::1]:7000").output,
            Output::Net {
                host: "::1".into(),
                port: 7000
            }
        );
    }

    #[test]
    fn the_error_matrix() {
        let cases = [
            ("=5", "general syntax error parsing options"),
            ("abcdefghijklmnop=1", "general syntax error parsing options"),
            ("cpu=samples,=x", "general syntax error parsing options"),
            (
                "file=a,file=b",
                "file or net options should only appear once",
            ),
            (
                "net=h:1,file=a",
                "file or net options should only appear once",
            ),
            ("file=", "syntax error parsing file=filename"),
            ("net=localhost", "net option missing ':'"),
            ("net=localhost:", "net option missing port"),
            (
                "net=localhost:0",
                "net option port must be a number from 1 to 65535",
            ),
            (
                "net=localhost:70000",
                "net option port must be a number from 1 to 65535",
            ),
            ("format=", "syntax error parsing format=a|b|jfr"),
            ("format=c", "format option value must be a|b|jfr"),
            ("depth=", "syntax error parsing depth=DECIMAL"),
            ("depth=-1", "depth option value must be decimal and >= 0"),
            ("depth=4x", "depth option value must be decimal and >= 0"),
            ("interval=", "syntax error parsing interval=DECIMAL"),
            (
                "interval=0",
                "interval option value must be decimal and > 0",
            ),
            ("cutoff=", "syntax error parsing cutoff=DOUBLE"),
            (
                "cutoff=-0.5",
                "cutoff option value must be floating point and >= 0",
            ),
            (
                "cutoff=abc",
                "cutoff option value must be floating point and >= 0",
            ),
            ("cpu", "syntax error parsing cpu=y|samples|wall|times|old"),
            (
                "cpu=fast",
                "cpu option value must be y|samples|wall|times|old",
            ),
            ("sampler", "syntax error parsing sampler=async|jvmti"),
            ("sampler=perf", "sampler option value must be async|jvmti"),
            ("timer", "syntax error parsing timer=auto|perf|cpu|itimer"),
            (
                "timer=hpet",
                "timer option value must be auto|perf|cpu|itimer",
            ),
            (
                "cpu=wall,cpu=samples",
                "cpu=wall cannot be used with cpu=samples",
            ),
            (
                "session=go",
                "session option value must be start|dump|stop|status",
            ),
            ("reply=", "syntax error parsing reply=FILENAME"),
            ("heap=", "syntax error parsing heap=dump|sites|all"),
            ("heap=none", "heap option value must be dump|sites|all"),
            ("lineno=yes", "lineno option value must be y|n"),
            ("thread=1", "thread option value must be y|n"),
            ("doe=", "doe option value must be y|n"),
            ("msa=x", "msa option value must be y|n"),
            ("force=Y", "force option value must be y|n"),
            ("verbose=t", "verbose option value must be y|n"),
            ("monitor=on", "monitor option value must be y|n"),
            ("gc_okay=q", "gc_okay option value must be y|n"),
            ("primfields=q", "primfields option value must be y|n"),
            ("primarrays=q", "primarrays option value must be y|n"),
            ("coredump=q", "coredump option value must be y|n"),
            ("errorexit=q", "errorexit option value must be y|n"),
            ("pause=q", "pause option value must be y|n"),
            ("debug=q", "debug option value must be y|n"),
            ("logflags=z", "logflags option value must be numeric"),
            ("debugflags=", "debugflags option value must be numeric"),
            ("X=1q", "X option value must be numeric"),
            (
                "exitpause=1",
                "The exitpause option was removed, use -XX:OnError='cmd %%p'",
            ),
            (
                "precrash=1",
                "The precrash option was removed, use -XX:OnError='precrash -p %%p'",
            ),
            (
                "alloc_interval=-1",
                "alloc_interval option value must be a byte count >= 0, optionally with k, m or g",
            ),
            ("sites=all", "sites option value must be exact|fast"),
            ("sites", "sites option value must be exact|fast"),
            ("foo=1", "Unknown option: foo"),
            ("foo", "Unknown option: foo"),
            ("cpu,heap=sites", "Unknown option: cpu,heap"),
            (
                "format=b,cpu=times",
                "cpu=times|old is not supported with format=b",
            ),
            (
                "format=b,cpu=old,monitor=y",
                "cpu=times|old is not supported with format=b",
            ),
            (
                "monitor=y,format=b",
                "monitor=y is not supported with format=b",
            ),
        ];
        for (opts, expected) in cases {
            assert_eq!(error(opts), expected, "{opts}");
        }
    }

    #[test]
    fn new_options_sampler_wall_and_session() {
        let o = parse("cpu=samples");
        assert_eq!(
            (o.sampler, o.session, o.reply.as_deref()),
            (Sampler::Async, Session::Start, None)
        );
        let o = parse("cpu=samples,sampler=jvmti");
        assert_eq!(o.sampler, Sampler::Jvmti);
        assert_eq!(parse("cpu=samples").timer, Timer::Auto);
        for (text, timer) in [
            ("perf", Timer::Perf),
            ("cpu", Timer::Cpu),
            ("itimer", Timer::Itimer),
            ("auto", Timer::Auto),
        ] {
            assert_eq!(parse(&format!("cpu=samples,timer={text}")).timer, timer);
        }
        let o = parse("cpu=wall");
        assert!(o.cpu_wall && !o.cpu_samples && !o.heap_dump && !o.heap_sites);
        let o = parse("session=stop,reply=/tmp/r");
        assert_eq!(
            (o.session, o.reply.as_deref()),
            (Session::Stop, Some("/tmp/r"))
        );
    }

    #[test]
    fn error_line_names_the_whole_option_string() {
        let err = Options::parse("foo=1", Some("depth=3")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "HPROF ERROR: hprof option error: Unknown option: foo (foo=1,depth=3)"
        );
    }

    #[test]
    fn environment_options_are_appended() {
        let o = match Options::parse("cpu=samples", Some("depth=9")).unwrap() {
            Parsed::Run(o) => o,
            Parsed::Help => unreachable!(),
        };
        assert_eq!(
            (o.depth, o.cpu_samples, o.text.as_str()),
            (9, true, "cpu=samples,depth=9")
        );
        assert!(
            matches!(Options::parse("", Some("heap=sites")), Ok(Parsed::Run(o)) if o.heap_sites && !o.heap_dump)
        );
    }

    #[test]
    fn force_n_names_like_the_original() {
        let exists = |_: &Path| true;
        let name = |p: &str, f| unique_output_name(Path::new(p), f, 4242, exists);
        assert_eq!(
            name("java.hprof.txt", Format::Text),
            PathBuf::from("java.hprof.4242.txt")
        );
        assert_eq!(
            name("out.log", Format::Text),
            PathBuf::from("out.log.4242.txt")
        );
        assert_eq!(
            name("dir/OUT.TXT", Format::Text),
            PathBuf::from("dir/OUT.4242.TXT")
        );
        assert_eq!(
            name("java.hprof", Format::Binary),
            PathBuf::from("java.hprof.4242")
        );
        assert_eq!(
            unique_output_name(Path::new("java.hprof.txt"), Format::Text, 1, |_| false),
            PathBuf::from("java.hprof.txt")
        );
    }
}
