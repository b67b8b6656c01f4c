//! Read-ahead of the redo scan on its own thread.
//!
//! Reading the log (system calls, kernel copies, a CRC32C per 512-byte
//! block) and parsing it (decoding, copying into the arena, indexing) are
//! both CPU work; on a thread of its own the scan overlaps the parse:
//!
//! ```text
//!  thread basalt-redo-scan:   next_chunk -> copy into a recycled buffer
//!                             -> send (blocks when READ_AHEAD chunks wait)
//!  recovery thread:           recv -> parse -> (apply a batch) -> give the
//!                             buffer back
//! ```
//!
//! The thread is woken only by room in the channel; it stops at the end of
//! the valid redo, on a scan error (forwarded), or when the recovery
//! thread hangs up, and hands the [`RecoveryScan`] back through
//! [`ScanReader::finish`] so it can become the running log. At most
//! `READ_AHEAD + 2` chunk buffers (256 KiB each) exist at once.

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

use basalt_common::Lsn;
use basalt_wal::{LogError, RecoveryScan};

use crate::error::{MtrError, MtrResult};

/// Chunks read ahead of the parser.
const READ_AHEAD: usize = 8;

/// A chunk of redo payload and the LSN of its first byte.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub(crate) lsn: Lsn,
    pub(crate) bytes: Vec<u8>,
}

/// The scan running on its own thread.
#[derive(Debug)]
pub(crate) struct ScanReader {
    chunks: Receiver<Result<Chunk, LogError>>,
    spare: Sender<Vec<u8>>,
    thread: JoinHandle<RecoveryScan>,
}

fn run(
    mut scan: RecoveryScan,
    out: SyncSender<Result<Chunk, LogError>>,
    spare: Receiver<Vec<u8>>,
) -> RecoveryScan {
    loop {
        let msg = match scan.next_chunk() {
            Ok(Some((lsn, bytes))) => {
                let mut buf = spare.try_recv().unwrap_or_default();
                buf.clear();
                buf.extend_from_slice(bytes);
                Ok(Chunk { lsn, bytes: buf })
            }
            Ok(None) => break,
            Err(e) => Err(e),
        };
        let failed = msg.is_err();
        if out.send(msg).is_err() || failed {
            break;
        }
    }
    scan
}

impl ScanReader {
    /// Starts reading `scan` ahead on a new thread.
    pub(crate) fn start(scan: RecoveryScan) -> MtrResult<ScanReader> {
        let (tx, chunks) = mpsc::sync_channel(READ_AHEAD);
        let (spare, spare_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("basalt-redo-scan".into())
            .spawn(move || run(scan, tx, spare_rx))
            .map_err(|e| {
                MtrError::Buf(basalt_buf::BufError::Io(basalt_io::IoError::os(
                    "spawn redo scan thread",
                    "",
                    e,
                )))
            })?;
        Ok(ScanReader {
            chunks,
            spare,
            thread,
        })
    }

    /// The next chunk; `None` at the end of the valid redo.
    pub(crate) fn next(&self) -> MtrResult<Option<Chunk>> {
        match self.chunks.recv() {
            Ok(Ok(chunk)) => Ok(Some(chunk)),
            Ok(Err(e)) => Err(e.into()),
            // The thread hung up: the scan ended.
            Err(_) => Ok(None),
        }
    }

    /// Gives a chunk's buffer back for reuse.
    pub(crate) fn recycle(&self, chunk: Chunk) {
        // The thread may have ended already; the buffer is then dropped.
        let _ = self.spare.send(chunk.bytes);
    }

    /// Waits for the thread and returns the scan (positioned at the end of
    /// the valid redo when `next` returned `None`). A panic of the thread
    /// (a bug, never bad data) is passed on.
    pub(crate) fn finish(self) -> RecoveryScan {
        let ScanReader {
            chunks,
            spare,
            thread,
        } = self;
        drop(chunks);
        drop(spare);
        match thread.join() {
            Ok(scan) => scan,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
