//! SIGTERM and SIGINT: the first one starts a clean shutdown.
//!
//! [`install`] registers both signals synchronously (before the server
//! announces that it is ready, so a signal sent right after the ready line
//! is never lost to the default action) and spawns a task on the tokio
//! runtime that wakes on either one, logs it, and calls
//! [`ServerHandle::shutdown`]: the accept loop stops and every connection
//! is closed (running statements are cancelled). `Server::serve` then
//! returns and the main thread shuts the storage down.

use basalt_protocol::ServerHandle;
use tokio::signal::unix::{signal, SignalKind};

/// Registers SIGTERM and SIGINT; must run inside the tokio runtime.
pub fn install(handle: ServerHandle) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!("received {name}: shutting down (no new connections, closing sessions)");
        handle.shutdown();
    });
    Ok(())
}
