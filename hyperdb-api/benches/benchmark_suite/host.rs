//! The `Host:` block: what a result was measured on.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Facts about the machine and the software under test.
#[derive(Clone, Debug)]
pub struct Host {
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub memory: String,
    pub rustc: String,
    pub hyperd: String,
    pub crate_version: String,
    pub transport: String,
    pub date: String,
    /// 1-minute load average when the run started, and when it ended.
    pub load: (String, Option<String>),
}

impl Host {
    pub fn collect(hyperd: &Path, transport: &str) -> Host {
        Host {
            os: os(),
            cpu: cpu_model(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory: memory(),
            rustc: command_line("rustc", &["--version"]),
            hyperd: command_line(&hyperd.to_string_lossy(), &["--version"]),
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
            transport: transport.to_owned(),
            date: utc_now(),
            load: (load_average(), None),
        }
    }

    /// Records the load average at the end of the run.
    pub fn finish(&mut self) {
        self.load.1 = Some(load_average());
    }

    /// `(label, value)` pairs in display order.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("OS", self.os.clone()),
            ("CPU", format!("{} ({} cores)", self.cpu, self.cores)),
            ("Memory", self.memory.clone()),
            ("rustc", self.rustc.clone()),
            ("hyperd", self.hyperd.clone()),
            ("hyperdb-api", self.crate_version.clone()),
            ("Transport", self.transport.clone()),
            ("Date", self.date.clone()),
            (
                "Load",
                match &self.load.1 {
                    Some(end) => format!("{} at start, {end} at end (1-min average)", self.load.0),
                    None => format!("{} (1-min average)", self.load.0),
                },
            ),
        ]
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The first line of `program args`' stdout, or `unknown`.
fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_owned())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn os() -> String {
    let name = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = read("/proc/sys/kernel/osrelease");
    match kernel.trim() {
        "" => format!("{name} ({})", std::env::consts::ARCH),
        k => format!("{name}, kernel {k} ({})", std::env::consts::ARCH),
    }
}

/// Other work on the machine skews every figure: say how much there was.
fn load_average() -> String {
    read("/proc/loadavg")
        .split_whitespace()
        .next()
        .map_or_else(|| "unknown".into(), str::to_owned)
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| command_line("sysctl", &["-n", "machdep.cpu.brand_string"]))
}

fn memory() -> String {
    read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or_else(
            || "unknown".into(),
            |kib| format!("{:.1} GiB", kib / (1024.0 * 1024.0)),
        )
}

/// Now as `YYYY-MM-DD HH:MM UTC`.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}
