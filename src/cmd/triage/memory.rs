//! How many namespaces a live triage reads at once, chosen by the memory
//! the process holds (issue 30): a namespace being read holds its objects
//! until it is judged, and what was judged stays to the end, so another
//! namespace starts beside the ones being read only while the resident
//! memory is under a budget. One is always read, whatever the memory.

use super::read::NAMESPACES_AT_ONCE;

/// Resident memory (MiB) under which another namespace may start beside
/// those being read. Measured at 50,000 Pods (docs/benchmarks.md): three
/// namespaces of a thousand Pods in flight hold about 40 MB beside what
/// was already judged.
pub(super) const BUDGET_MIB: u64 = 100;

/// Overrides [`BUDGET_MIB`]: to measure the budget against namespaces read
/// three at a time whatever the memory (a budget set very high), as the
/// manual runs in docs/benchmarks.md did.
pub const MEMORY_BUDGET_ENV: &str = "MDIAG_TRIAGE_MEMORY_MIB";

pub(super) fn budget_mib() -> u64 {
    std::env::var(MEMORY_BUDGET_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(BUDGET_MIB)
}

/// The process's resident memory in MiB, where the system tells it
/// (Linux's `/proc/self/status`); elsewhere nothing, and the namespaces
/// are read [`NAMESPACES_AT_ONCE`] at a time.
pub(super) fn resident_mib() -> Option<u64> {
    resident_mib_in(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// `VmRSS:  123456 kB` of a `/proc/PID/status` text, in MiB.
fn resident_mib_in(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024)
}

/// Whether another namespace may start beside the `reading` ones.
pub(super) fn room_for_another(reading: usize, resident: Option<u64>, budget: u64) -> bool {
    reading == 0 || (reading < NAMESPACES_AT_ONCE && resident.is_none_or(|r| r < budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resident_memory_is_read_from_the_status_text() {
        let status = "Name:\tmdiag\nVmPeak:\t  300000 kB\nVmRSS:\t  153600 kB\nThreads:\t4\n";
        assert_eq!(resident_mib_in(status), Some(150));
        assert_eq!(resident_mib_in("Name:\tmdiag\n"), None);
        assert_eq!(resident_mib_in("VmRSS:\tlots kB\n"), None);
    }

    #[test]
    fn one_namespace_is_always_read_and_more_only_under_the_budget() {
        // Nothing being read: one starts however much is held.
        assert!(room_for_another(0, Some(900), 100));
        // Under the budget: up to the most at once.
        assert!(room_for_another(1, Some(60), 100));
        assert!(room_for_another(NAMESPACES_AT_ONCE - 1, Some(99), 100));
        assert!(!room_for_another(NAMESPACES_AT_ONCE, Some(10), 100));
        // At or over it: no other.
        assert!(!room_for_another(1, Some(100), 100));
        // Memory that cannot be read bounds nothing but the count.
        assert!(room_for_another(2, None, 100));
        assert!(!room_for_another(NAMESPACES_AT_ONCE, None, 100));
    }
}
