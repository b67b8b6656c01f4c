//! The log flusher threads (group commit fsyncs) and the timer thread that
//! drives `innodb_flush_log_at_trx_commit` = 0 and 2.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Instant;

use crate::format::{block_of, BLOCKS_PER_UNIT};
use crate::shared::Shared;
use crate::stats::Counters;
use crate::LogError;

/// Log flusher thread body: sleeps until someone needs durability beyond
/// every claimed round and bytes past it are ready, then runs a round (see
/// [`flush_once`]). Commits that arrive during a round are written and
/// synced together by the next one, on this flusher or another (group
/// commit; rounds of different flushers overlap).
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

/// One flush round: writes whatever ready bytes the writer thread has not
/// written yet, claims the written LSN as its target (nothing to do when a
/// round in progress already claimed it), fsyncs the files holding the
/// bytes between the durable LSN and the target, and publishes the target
/// as the new `flushed_lsn`.
fn flush_once(sh: &Shared) -> Result<(), LogError> {
    let (from, target) = {
        let mut writer = sh.writer.lock();
        let ready = sh.buffer.ready_lsn();
        if sh.written.get() < ready {
            writer.write(sh, ready)?;
        }
        let target = sh.written.get();
        if sh.claimed.fetch_max(target, SeqCst) >= target {
            return Ok(());
        }
        (sh.flushed.get(), target)
    };
    // Every byte of [from, target) was written before this point; bytes
    // below `from` are durable. An fsync started now covers the range even
    // where an earlier round's fsync is still running.
    let geometry = &sh.geometry;
    let last_unit = block_of(target) / BLOCKS_PER_UNIT;
    let mut unit = block_of(from) / BLOCKS_PER_UNIT;
    while unit <= last_unit {
        let (file, _) = geometry.unit_location(unit);
        sh.files[file].sync()?;
        Counters::bump(&sh.counters.log_fsyncs, 1);
        unit += geometry.units_to_file_end(unit);
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
