//! `FaultPlan`: which reads, writes and syncs a `FaultyIo` breaks, and how.
//!
//! A plan is a list of one-shot (or, for syncs, standing) rules plus a
//! crash flag, behind one mutex so tests can change it while I/O runs on
//! other threads. Counting is per rule: "the Nth write" means the Nth write
//! that matches the rule's path filter *after the rule was installed*
//! (1 = the next one). Installing every rule before the workload starts
//! therefore makes N the absolute write number, which is how crash-point
//! sweeps use it:
//!
//! ```text
//!   for n in 1..=writes_of_a_clean_run {
//!       fresh MemIo; plan.crash_at_write(n); run workload (errors expected);
//!       mem.crash(); recover; check invariants
//!   }
//! ```
//!
//! When several rules fire on the same operation, the one installed first
//! decides the outcome; the others are used up all the same.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::IoError;

/// What a torn write reports to its caller after writing its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornWriteReport {
    /// Report success: the caller believes the whole write happened (the
    /// lying-disk case that checksums and doublewrite must catch).
    Success,
    /// Report [`IoError::Injected`]: the caller knows the write failed.
    Failure,
}

/// Which operations a rule watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpClass {
    Read,
    Write,
    Sync,
}

/// What a rule does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Fail the operation; nothing reaches the inner backend.
    Fail,
    /// Write only the first `keep` bytes, then report as told.
    Tear {
        keep: usize,
        report: TornWriteReport,
    },
    /// Power fails at this write: it reaches the inner backend only as its
    /// first `keep` bytes (none when `None`), and from now on every write
    /// and sync fails.
    Crash { keep: Option<usize> },
}

#[derive(Debug)]
struct Rule {
    class: OpClass,
    /// Substring the path must contain; `None` matches every path.
    filter: Option<String>,
    /// Matching operations still to let through before firing; `None` for
    /// a standing rule that fires on every match.
    countdown: Option<u64>,
    action: Action,
}

impl Rule {
    fn matches(&self, class: OpClass, path: &Path) -> bool {
        self.class == class
            && self
                .filter
                .as_deref()
                .is_none_or(|f| contains(path.as_os_str().as_encoded_bytes(), f.as_bytes()))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The fate of one write, as decided by the plan.
#[derive(Debug)]
pub(crate) enum WriteVerdict {
    /// Forward to the inner backend untouched.
    Pass,
    /// Do not forward; report this error.
    Fail(IoError),
    /// Forward only the first `keep` bytes, then report `report`.
    Tear {
        keep: usize,
        report: Result<(), IoError>,
    },
}

/// A shared, adjustable set of faults for [`crate::FaultyIo`]. See the
/// module note for how operations are counted.
#[derive(Debug, Default)]
pub struct FaultPlan {
    rules: Mutex<Vec<Rule>>,
    crashed: AtomicBool,
    reads_seen: AtomicU64,
    writes_seen: AtomicU64,
    syncs_seen: AtomicU64,
    faults_fired: AtomicU64,
}

impl FaultPlan {
    /// An empty plan (everything passes), ready to share.
    pub fn new() -> Arc<FaultPlan> {
        Arc::new(FaultPlan::default())
    }

    fn add(&self, class: OpClass, filter: Option<&str>, nth: Option<u64>, action: Action) {
        self.rules.lock().push(Rule {
            class,
            filter: filter.map(str::to_owned),
            countdown: nth.map(|n| n.max(1)),
            action,
        });
    }

    /// Fails the `nth` write from now (1 = the next) with
    /// [`IoError::Injected`]; nothing of it reaches the inner backend.
    pub fn fail_write(&self, nth: u64) {
        self.add(OpClass::Write, None, Some(nth), Action::Fail);
    }

    /// As [`FaultPlan::fail_write`], counting only writes to paths that
    /// contain `path_part`.
    pub fn fail_write_to(&self, path_part: &str, nth: u64) {
        self.add(OpClass::Write, Some(path_part), Some(nth), Action::Fail);
    }

    /// Tears the `nth` write from now: only its first `keep` bytes reach the
    /// inner backend (rounded down to [`crate::DIRECT_IO_ALIGN`] on direct
    /// files, as a device tears at sector boundaries), then the write
    /// reports as `report` says.
    pub fn tear_write(&self, nth: u64, keep: usize, report: TornWriteReport) {
        self.add(
            OpClass::Write,
            None,
            Some(nth),
            Action::Tear { keep, report },
        );
    }

    /// As [`FaultPlan::tear_write`], counting only writes to paths that
    /// contain `path_part`.
    pub fn tear_write_to(&self, path_part: &str, nth: u64, keep: usize, report: TornWriteReport) {
        self.add(
            OpClass::Write,
            Some(path_part),
            Some(nth),
            Action::Tear { keep, report },
        );
    }

    /// Fails the `nth` sync (file `sync` or `sync_dir`) from now.
    pub fn fail_sync(&self, nth: u64) {
        self.add(OpClass::Sync, None, Some(nth), Action::Fail);
    }

    /// As [`FaultPlan::fail_sync`], counting only syncs of paths that
    /// contain `path_part`.
    pub fn fail_sync_to(&self, path_part: &str, nth: u64) {
        self.add(OpClass::Sync, Some(path_part), Some(nth), Action::Fail);
    }

    /// Fails every sync from now until [`FaultPlan::clear`].
    pub fn fail_all_syncs(&self) {
        self.add(OpClass::Sync, None, None, Action::Fail);
    }

    /// Fails every sync of paths containing `path_part` until
    /// [`FaultPlan::clear`].
    pub fn fail_all_syncs_to(&self, path_part: &str) {
        self.add(OpClass::Sync, Some(path_part), None, Action::Fail);
    }

    /// Fails the `nth` read from now.
    pub fn fail_read(&self, nth: u64) {
        self.add(OpClass::Read, None, Some(nth), Action::Fail);
    }

    /// As [`FaultPlan::fail_read`], counting only reads of paths that
    /// contain `path_part`.
    pub fn fail_read_to(&self, path_part: &str, nth: u64) {
        self.add(OpClass::Read, Some(path_part), Some(nth), Action::Fail);
    }

    /// Power fails at the `nth` write from now: that write does not reach
    /// the inner backend, and it and every later write and sync fail with
    /// [`IoError::Injected`]. The test then calls `MemIo::crash()` on the
    /// inner backend to drop what was never synced.
    pub fn crash_at_write(&self, nth: u64) {
        self.add(
            OpClass::Write,
            None,
            Some(nth),
            Action::Crash { keep: None },
        );
    }

    /// As [`FaultPlan::crash_at_write`], but the fatal write reaches the
    /// inner backend as its first `keep` bytes (a page torn by the power
    /// cut) before everything stops.
    pub fn crash_at_write_torn(&self, nth: u64, keep: usize) {
        self.add(
            OpClass::Write,
            None,
            Some(nth),
            Action::Crash { keep: Some(keep) },
        );
    }

    /// Power fails now: every later write and sync fails.
    pub fn crash_now(&self) {
        self.crashed.store(true, Ordering::SeqCst);
    }

    /// True once a crash point was reached (or [`FaultPlan::crash_now`]).
    pub fn is_crashed(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }

    /// Removes every pending rule and lifts a crash; counters are kept.
    pub fn clear(&self) {
        let mut rules = self.rules.lock();
        rules.clear();
        self.crashed.store(false, Ordering::SeqCst);
    }

    /// Reads seen (passed or failed).
    pub fn reads_seen(&self) -> u64 {
        self.reads_seen.load(Ordering::Relaxed)
    }

    /// Writes seen (passed, failed or torn), single calls and batch
    /// requests alike.
    pub fn writes_seen(&self) -> u64 {
        self.writes_seen.load(Ordering::Relaxed)
    }

    /// Syncs seen (file syncs and directory syncs).
    pub fn syncs_seen(&self) -> u64 {
        self.syncs_seen.load(Ordering::Relaxed)
    }

    /// Operations a rule or the crash state has failed or torn.
    pub fn faults_fired(&self) -> u64 {
        self.faults_fired.load(Ordering::Relaxed)
    }

    /// Runs the rules of `class` against one operation on `path`; returns
    /// the action of the first rule that fired.
    fn fire(&self, class: OpClass, path: &Path) -> Option<Action> {
        let mut rules = self.rules.lock();
        if rules.is_empty() {
            return None;
        }
        let mut decided = None;
        rules.retain_mut(|rule| {
            if !rule.matches(class, path) {
                return true;
            }
            let (fired, keep_rule) = match rule.countdown.as_mut() {
                None => (true, true),
                Some(left) => {
                    *left -= 1;
                    (*left == 0, *left > 0)
                }
            };
            if fired && decided.is_none() {
                decided = Some(rule.action);
            }
            keep_rule
        });
        if let Some(Action::Crash { .. }) = decided {
            self.crashed.store(true, Ordering::SeqCst);
        }
        decided
    }

    fn injected(&self, what: std::fmt::Arguments<'_>) -> IoError {
        self.faults_fired.fetch_add(1, Ordering::Relaxed);
        IoError::Injected(what.to_string())
    }

    // PERF: with no rules installed this is two atomics and an uncontended
    // lock; no allocation unless a fault fires.
    pub(crate) fn on_write(&self, path: &Path, len: usize, direct: bool) -> WriteVerdict {
        let n = self.writes_seen.fetch_add(1, Ordering::Relaxed) + 1;
        if self.is_crashed() {
            return WriteVerdict::Fail(self.injected(format_args!(
                "write #{n} to {} after the simulated crash",
                path.display()
            )));
        }
        let align_keep = |keep: usize| {
            let keep = keep.min(len);
            if direct {
                keep - keep % crate::DIRECT_IO_ALIGN
            } else {
                keep
            }
        };
        match self.fire(OpClass::Write, path) {
            None => WriteVerdict::Pass,
            Some(Action::Fail) => WriteVerdict::Fail(
                self.injected(format_args!("write #{n} to {} failed", path.display())),
            ),
            Some(Action::Tear { keep, report }) => {
                let keep = align_keep(keep);
                let report = match report {
                    TornWriteReport::Success => {
                        self.faults_fired.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    TornWriteReport::Failure => Err(self.injected(format_args!(
                        "write #{n} to {} torn after {keep} of {len} bytes",
                        path.display()
                    ))),
                };
                WriteVerdict::Tear { keep, report }
            }
            Some(Action::Crash { keep }) => {
                let err = self.injected(format_args!(
                    "simulated crash at write #{n} to {}",
                    path.display()
                ));
                match keep {
                    None => WriteVerdict::Fail(err),
                    Some(k) => WriteVerdict::Tear {
                        keep: align_keep(k),
                        report: Err(err),
                    },
                }
            }
        }
    }

    pub(crate) fn on_sync(&self, path: &Path) -> Result<(), IoError> {
        let n = self.syncs_seen.fetch_add(1, Ordering::Relaxed) + 1;
        if self.is_crashed() {
            return Err(self.injected(format_args!(
                "sync #{n} of {} after the simulated crash",
                path.display()
            )));
        }
        match self.fire(OpClass::Sync, path) {
            None => Ok(()),
            Some(_) => Err(self.injected(format_args!("sync #{n} of {} failed", path.display()))),
        }
    }

    pub(crate) fn on_read(&self, path: &Path) -> Result<(), IoError> {
        let n = self.reads_seen.fetch_add(1, Ordering::Relaxed) + 1;
        match self.fire(OpClass::Read, path) {
            None => Ok(()),
            Some(_) => Err(self.injected(format_args!("read #{n} of {} failed", path.display()))),
        }
    }

    /// Fails namespace and size changes once crashed.
    pub(crate) fn check_not_crashed(&self, op: &str, path: &Path) -> Result<(), IoError> {
        if self.is_crashed() {
            return Err(self.injected(format_args!(
                "{op} of {} after the simulated crash",
                path.display()
            )));
        }
        Ok(())
    }
}
