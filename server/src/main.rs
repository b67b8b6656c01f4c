//! `basaltd`: the Basalt database server.
//!
//! ```text
//!   main ── startup::run(argv)
//!     1. options: basalt_config::load_server_options (files + command line);
//!        an error prints `file:line: ...` and exits 1; --help / --version /
//!        --print-defaults print and exit 0
//!     2. logging (logging.rs): `log_error` file or stderr, filter from BASALT_LOG
//!     3. data directory: created if missing; pid file written
//!     4. storage: basalt_mtr::Storage::open_or_create (crash recovery on open),
//!        dynamic InnoDB variables subscribed to their owners
//!     5. SQL layer: basalt_sql::SqlServer (accounts, grants, schemata)
//!     6. network: tokio runtime, bind `bind_address:port` (0 = any free port),
//!        log "basaltd ready for connections: address A port P", serve with
//!        the protocol crate; the Backend glue is backend.rs. TLS uses a
//!        self-signed certificate kept in the datadir (server-cert.pem,
//!        server-key.pem; MySQL's auto_generate_certs), so have_ssl = YES;
//!        caching_sha2_password's RSA key pair lives there too
//!        (private_key.pem, public_key.pem)
//!     7. SIGTERM / SIGINT (signals.rs): stop accepting, close connections,
//!        final checkpoint (Storage::shutdown), remove the pid file, exit 0
//! ```
//!
//! Accounts, grants and schemata: the data dictionary (`basalt-catalog`,
//! opened or bootstrapped after recovery) keeps them in system tables in
//! `ibdata1`; `basalt_sql::acl::CatalogAclStore` adapts it to the SQL
//! layer's `AclStore`, and `SqlServer::new(globals, store)` loads them.
//!
//! Threads: connection threads (the protocol crate's
//! one-thread-per-connection model with a thread cache sized by
//! `thread_cache_size`) accept connections, do their own socket I/O and run
//! every statement of their connection, so a slow statement never delays
//! other connections; the tokio runtime (one worker thread) only runs the
//! signal listener and awaits the protocol server's end. The storage layer
//! runs its log writer, flusher and page cleaner threads.

mod backend;
mod logging;
mod signals;
mod startup;

fn main() -> std::process::ExitCode {
    startup::run(std::env::args_os().collect())
}
