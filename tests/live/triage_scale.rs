//! Live trials of `mdiag triage` on a loaded cluster.

use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    Vec::new()
}
