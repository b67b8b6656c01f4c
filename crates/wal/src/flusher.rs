//! The log flusher thread (group commit fsyncs) and the timer thread that
//! drives `innodb_flush_log_at_trx_commit` = 0 and 2.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Instant;

use crate::shared::Shared;
use crate::stats::Counters;
use crate::LogError;

/// Log flusher thread body: sleeps until someone needs durability beyond
/// `flushed_lsn` and bytes past it are ready, then writes whatever of them
/// the writer thread has not written yet, fsyncs every file written since
/// the last round and publishes the written LSN it read before syncing as
/// the new `flushed_lsn`. Commits that arrive during the fsync are written
/// and synced together by the next round (group commit).
pub(crate) fn run_flusher(sh: Arc<Shared>) {
    loop {
        if !sh.usable() {
            return;
        }
        if sh.flusher_has_work() {
            if let Err(e) = flush_once(&sh) {
                sh.fail(e);
                return;
            }
            continue;
        }
        sh.flusher_wake.sleep_unless(None, || sh.flusher_has_work());
    }
}

fn flush_once(sh: &Shared) -> Result<(), LogError> {
    let ready = sh.buffer.ready_lsn();
    if sh.written.get() < ready {
        sh.writer.lock().write(sh, ready)?;
    }
    // Read the written LSN before taking the dirty flags: every write below
    // it set its flag before publishing it.
    let target = sh.written.get();
    for (i, dirty) in sh.dirty.iter().enumerate() {
        if dirty.swap(false, SeqCst) {
            sh.files[i].sync()?;
            Counters::bump(&sh.counters.log_fsyncs, 1);
        }
    }
    sh.flushed.advance(target);
    Ok(())
}

/// Timer thread body: once per `innodb_flush_log_at_timeout` asks for
/// everything appended so far to be written and fsynced (this is what makes
/// modes 0 and 2 durable within about a second).
pub(crate) fn run_timer(sh: Arc<Shared>) {
    let mut next = Instant::now() + sh.timer_period;
    loop {
        if !sh.usable() {
            return;
        }
        let now = Instant::now();
        if now >= next {
            next = now + sh.timer_period;
            let current = sh.buffer.next_lsn();
            if current > sh.flushed.get() {
                sh.request_flush(current);
            }
            continue;
        }
        sh.timer_wake
            .sleep_unless(Some(next - now), || !sh.usable());
    }
}
