//! Peak resident memory of the suite's own process (the client), per
//! workload execution, for the scale sweep.
//!
//! Linux keeps the peak in `VmHWM` of `/proc/self/status`, and it only
//! grows over a process's life: read alone it would give every size the
//! peak of the largest size run so far. Writing `5` to
//! `/proc/self/clear_refs` resets it to the current RSS (Linux >= 4.0), so
//! the sweep resets it before each execution and reads it after: the
//! figure is that execution's peak, within the one process that already
//! holds the server, the runtime and the connections. A child process per
//! size would give the same figure plus a process start, a second hyperd
//! or a hand-over of the server, and would measure a cold allocator; the
//! reset was checked to work on the reference machine (a 300 MiB
//! allocation freed: `VmHWM` 320 MiB, after the reset 13 MiB) and
//! [`reset_peak`] fails loudly where it does not, rather than report a
//! monotonic figure as a per-size one.

use crate::data::Result;

/// `VmRSS` and `VmHWM` of `/proc/self/status`, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Resident now.
    pub rss: u64,
    /// Peak resident since the process started or the last [`reset_peak`].
    pub peak: u64,
}

/// Parses the `VmRSS:` and `VmHWM:` lines (`<n> kB`) of a `status` file.
pub fn parse_status(status: &str) -> Result<Memory> {
    let field = |name: &str| -> Result<u64> {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .ok_or_else(|| format!("/proc/self/status has no `{name}:` line"))?;
        let mut words = line.split_whitespace();
        let (Some(n), Some("kB"), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("/proc/self/status: `{name}:{line}` is not `<n> kB`").into());
        };
        let kib: u64 = n
            .parse()
            .map_err(|_| format!("/proc/self/status: `{name}:{line}`: `{n}` is not a number"))?;
        Ok(kib * 1024)
    };
    Ok(Memory {
        rss: field("VmRSS")?,
        peak: field("VmHWM")?,
    })
}

/// This process's memory now.
pub fn current() -> Result<Memory> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("reading /proc/self/status (peak RSS needs Linux): {e}"))?;
    parse_status(&status)
}

/// Resets `VmHWM` to the current RSS; fails when the kernel refused or
/// ignored it (the peak stayed above the RSS read just after).
pub fn reset_peak() -> Result<Memory> {
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|e| format!("resetting the peak RSS (/proc/self/clear_refs): {e}"))?;
    let now = current()?;
    // Pages touched between the reset and the read may raise both; a peak
    // well above the RSS means the reset did nothing.
    if now.peak > now.rss + 4 * 1024 * 1024 {
        return Err(format!(
            "/proc/self/clear_refs did not reset the peak RSS (VmHWM {} KiB, VmRSS {} KiB): \
             per-size peaks cannot be measured here",
            now.peak / 1024,
            now.rss / 1024
        )
        .into());
    }
    Ok(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tbenchmark_suite\nVmPeak:\t 2000000 kB\n\
        VmHWM:\t  123456 kB\nVmRSS:\t   65536 kB\nThreads:\t5\n";

    #[test]
    fn parses_rss_and_peak_in_bytes() {
        let m = parse_status(STATUS).unwrap();
        assert_eq!(m.rss, 65536 * 1024);
        assert_eq!(m.peak, 123456 * 1024);
    }

    #[test]
    fn missing_or_malformed_lines_are_errors_naming_the_line() {
        let e = parse_status("VmRSS:\t 1 kB\n").unwrap_err().to_string();
        assert!(e.contains("VmHWM"), "{e}");
        let e = parse_status("VmRSS:\t x kB\nVmHWM:\t 1 kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`x` is not a number"), "{e}");
        let e = parse_status("VmRSS:\t 1 MB\nVmHWM:\t 1 kB\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not `<n> kB`"), "{e}");
        // `VmRSSx:` is not `VmRSS:`.
        assert!(parse_status("VmRSSx:\t 1 kB\nVmHWM:\t 1 kB\n").is_err());
    }

    /// The reset works on this machine: after touching 64 MiB and freeing
    /// it, the peak is back near the RSS (count-based, no timing).
    #[test]
    fn reset_brings_the_peak_back_to_the_rss() {
        let before = current().unwrap();
        let big = vec![1u8; 64 * 1024 * 1024];
        // Touch every page so they are resident, then free them.
        assert_eq!(
            big.iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>(),
            16384
        );
        drop(big);
        let high = current().unwrap();
        assert!(
            high.peak >= before.rss + 60 * 1024 * 1024,
            "peak {} did not see the 64 MiB (rss before {})",
            high.peak,
            before.rss
        );
        let after = reset_peak().unwrap();
        assert!(
            after.peak < high.peak - 32 * 1024 * 1024,
            "peak after reset {} vs before {}",
            after.peak,
            high.peak
        );
    }
}
