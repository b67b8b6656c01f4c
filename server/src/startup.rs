//! Startup and shutdown of `basaltd` (the steps in the crate doc).

use std::ffi::OsString;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use basalt_buf::BufConfig;
use basalt_catalog::Catalog;
use basalt_config::{keys, Command, GlobalVars, Loader, SysValue};
use basalt_io::{open_io, FlushMethod, IoConfig};
use basalt_mtr::{Storage, StorageConfig};
use basalt_protocol::{AuthPlugin, ProtocolConfig, RsaKeySource, ServerHandle, TlsSource};
use basalt_sql::acl::CatalogAclStore;
use basalt_sql::SqlServer;
use basalt_wal::LogConfig;

use crate::backend::SqlBackend;
use crate::{logging, signals};

/// Runs the server; the return value is the process exit code.
pub fn run(argv: Vec<OsString>) -> ExitCode {
    let loader = Loader::from_process();
    let options = match loader.load(&argv) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("basaltd: {e}");
            return ExitCode::from(1);
        }
    };
    match &options.command {
        Command::Run => {}
        Command::Help => {
            print!("{}", loader.help_text());
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("{}", basalt_config::load::version_text());
            return ExitCode::SUCCESS;
        }
        Command::PrintDefaults(args) => {
            print!("{}", basalt_config::load::print_defaults_text(args));
            return ExitCode::SUCCESS;
        }
    }
    let globals = options.globals.clone();
    if let Err(e) = logging::init(&globals.get(keys::LOG_ERROR)) {
        eprintln!("basaltd: {e}");
        return ExitCode::from(1);
    }
    tracing::info!("{} starting", basalt_config::load::version_text().trim());
    for f in &options.files_read {
        tracing::info!(file = %f.display(), "read option file");
    }
    for w in &options.warnings {
        tracing::warn!("{w}");
    }
    match serve(globals) {
        Ok(()) => {
            tracing::info!("basaltd shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("basaltd: {e}");
            ExitCode::from(1)
        }
    }
}

/// Removes the pid file when dropped.
struct PidFile(PathBuf);

impl PidFile {
    fn write(path: &Path) -> Result<PidFile, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, format!("{}\n", std::process::id()))
            .map_err(|e| format!("cannot write pid file {}: {e}", path.display()))?;
        Ok(PidFile(path.to_path_buf()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.0) {
            tracing::warn!(file = %self.0.display(), error = %e, "cannot remove pid file");
        }
    }
}

fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The storage configuration from the variables.
fn storage_config(globals: &GlobalVars, datadir: &Path) -> StorageConfig {
    let flush_method =
        FlushMethod::from_mysql_name(globals.get(keys::INNODB_FLUSH_METHOD)).unwrap_or_default();
    let mut buf = BufConfig::for_pool_size(globals.get(keys::INNODB_BUFFER_POOL_SIZE));
    buf.instances = usize::try_from(globals.get(keys::INNODB_BUFFER_POOL_INSTANCES)).unwrap_or(1);
    buf.old_blocks_pct = u32_of(globals.get(keys::INNODB_OLD_BLOCKS_PCT));
    buf.old_blocks_time_ms = u32_of(globals.get(keys::INNODB_OLD_BLOCKS_TIME));
    buf.doublewrite = globals.get(keys::INNODB_DOUBLEWRITE);
    buf.lru_scan_depth = u32_of(globals.get(keys::INNODB_LRU_SCAN_DEPTH));
    buf.io_capacity = u32_of(globals.get(keys::INNODB_IO_CAPACITY));
    let mut log = LogConfig::new(datadir);
    log.file_size = globals.get(keys::INNODB_LOG_FILE_SIZE);
    log.files_in_group = u32_of(globals.get(keys::INNODB_LOG_FILES_IN_GROUP));
    log.buffer_size =
        usize::try_from(globals.get(keys::INNODB_LOG_BUFFER_SIZE)).unwrap_or(usize::MAX);
    log.flush_log_at_trx_commit = globals.get(keys::INNODB_FLUSH_LOG_AT_TRX_COMMIT) as u8;
    log.flush_log_at_timeout_secs = u32_of(globals.get(keys::INNODB_FLUSH_LOG_AT_TIMEOUT));
    log.file_buffering = globals.get(keys::INNODB_LOG_FILE_BUFFERING);
    let mut config = StorageConfig::new(datadir);
    config.log = log;
    config.buf = buf;
    config.direct_data_files = flush_method.direct_data_files();
    config.skip_fsync_after_direct_writes = flush_method.skips_data_fsync();
    config
}

/// Dynamic InnoDB variables reach their owners through listeners.
fn subscribe_storage(globals: &GlobalVars, storage: &Storage) {
    let pool = storage.store().pool.clone();
    let r1 = globals.on_change(keys::INNODB_OLD_BLOCKS_PCT, move |pct| {
        if let Err(e) = pool.set_old_blocks_pct(u32_of(pct)) {
            tracing::error!(error = %e, "innodb_old_blocks_pct not applied");
        }
    });
    let pool = storage.store().pool.clone();
    let r2 = globals.on_change(keys::INNODB_OLD_BLOCKS_TIME, move |ms| {
        pool.set_old_blocks_time(u32_of(ms))
    });
    let log = storage.store().log.clone();
    let r3 = globals.on_change(keys::INNODB_FLUSH_LOG_AT_TRX_COMMIT, move |mode| {
        if let Err(e) = log.set_flush_log_at_trx_commit(mode as u8) {
            tracing::error!(error = %e, "innodb_flush_log_at_trx_commit not applied");
        }
    });
    for r in [r1, r2, r3] {
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot subscribe to a dynamic variable");
        }
    }
}

/// `thread_cache_size`: the configured value, or MySQL's autosizing
/// (8 + max_connections / 100, at most 100) when it was not set; the value
/// in force is what `SHOW VARIABLES` reports.
fn thread_cache_size(globals: &GlobalVars) -> u64 {
    let configured = globals.get(keys::THREAD_CACHE_SIZE);
    if !matches!(
        globals.origin("thread_cache_size"),
        Ok(basalt_config::Origin::Compiled)
    ) {
        return configured;
    }
    let sized = (8 + globals.get(keys::MAX_CONNECTIONS) / 100).min(100);
    if let Err(e) = globals.set_server_value("thread_cache_size", SysValue::UInt(sized)) {
        tracing::warn!(error = %e, "thread_cache_size not autosized");
        return configured;
    }
    sized
}

fn protocol_config(globals: &GlobalVars, datadir: &Path) -> ProtocolConfig {
    let plugin = match globals.get(keys::DEFAULT_AUTHENTICATION_PLUGIN) {
        "mysql_native_password" => AuthPlugin::NativePassword,
        _ => AuthPlugin::CachingSha2Password,
    };
    ProtocolConfig {
        max_connections: usize::try_from(globals.get(keys::MAX_CONNECTIONS)).unwrap_or(usize::MAX),
        connect_timeout: Duration::from_secs(globals.get(keys::CONNECT_TIMEOUT)),
        net_write_timeout: Duration::from_secs(globals.get(keys::NET_WRITE_TIMEOUT)),
        default_auth_plugin: plugin,
        rsa_keys: RsaKeySource::Dir(datadir.to_path_buf()),
        // As MySQL's auto_generate_certs: a self-signed pair in the data
        // directory, created at the first start and reused afterwards.
        tls: TlsSource::Dir(datadir.to_path_buf()),
        thread_cache_size: usize::try_from(thread_cache_size(globals)).unwrap_or(usize::MAX),
        ..ProtocolConfig::default()
    }
}

fn serve(globals: Arc<GlobalVars>) -> Result<(), String> {
    let datadir = PathBuf::from(globals.get(keys::DATADIR));
    std::fs::create_dir_all(&datadir)
        .map_err(|e| format!("cannot create datadir {}: {e}", datadir.display()))?;
    let pid = PidFile::write(Path::new(&globals.get(keys::PID_FILE)))?;

    let io = open_io(&IoConfig {
        use_native_aio: globals.get(keys::INNODB_USE_NATIVE_AIO),
        flush_method: FlushMethod::from_mysql_name(globals.get(keys::INNODB_FLUSH_METHOD))
            .unwrap_or_default(),
        ..IoConfig::default()
    });
    let (storage, startup) = Storage::open_or_create(io, storage_config(&globals, &datadir))
        .map_err(|e| format!("cannot open the data directory {}: {e}", datadir.display()))?;
    tracing::info!(datadir = %datadir.display(), ?startup, "storage ready");
    subscribe_storage(&globals, &storage);

    let catalog = Arc::new(
        Catalog::open_or_bootstrap(storage.store())
            .map_err(|e| format!("cannot open the data dictionary: {e}"))?,
    );
    let acl_store = Arc::new(CatalogAclStore::new(storage.store().clone(), catalog));
    let sql = SqlServer::new(globals.clone(), acl_store)
        .map_err(|e| format!("cannot load accounts: {e}"))?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("basalt-io")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))?;
    let address = globals.get(keys::BIND_ADDRESS);
    let ip: IpAddr = address
        .parse()
        .map_err(|_| format!("bind_address '{address}' is not an IP address"))?;
    let port =
        u16::try_from(globals.get(keys::PORT)).map_err(|_| "port out of range".to_string())?;
    let backend = Arc::new(SqlBackend::new(sql.clone()));
    let config = protocol_config(&globals, &datadir);
    let handle_slot: Arc<OnceLock<ServerHandle>> = Arc::new(OnceLock::new());
    let slot = handle_slot.clone();
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, port))
            .await
            .map_err(|e| format!("cannot listen on {ip} port {port}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let _ = globals.set_server_value("port", SysValue::UInt(u64::from(local.port())));
        let globals_for_start = globals.clone();
        basalt_protocol::serve(listener, backend, config, move |handle| {
            let h = handle.clone();
            if let Err(e) = globals_for_start.on_change(keys::MAX_CONNECTIONS, move |n| {
                h.set_max_connections(usize::try_from(n).unwrap_or(usize::MAX))
            }) {
                tracing::error!(error = %e, "max_connections changes will not apply");
            }
            let h = handle.clone();
            if let Err(e) = globals_for_start.on_change(keys::THREAD_CACHE_SIZE, move |n| {
                h.set_thread_cache_size(usize::try_from(n).unwrap_or(usize::MAX))
            }) {
                tracing::error!(error = %e, "thread_cache_size changes will not apply");
            }
            if let Err(e) = signals::install(handle.clone()) {
                tracing::error!(error = %e, "cannot listen for SIGTERM/SIGINT; stop the server with SIGKILL");
            }
            let _ = slot.set(handle);
            for name in ["have_ssl", "have_openssl"] {
                let _ = globals_for_start.set_server_value(name, SysValue::Str("YES".into()));
            }
            tracing::info!(
                "basaltd ready for connections: address {} port {}",
                local.ip(),
                local.port()
            );
        })
        .await
        .map_err(|e| format!("server failed: {e}"))
    });
    drop(handle_slot);
    runtime.shutdown_timeout(Duration::from_secs(5));
    let lsn_note = storage.store().log.current_lsn().get();
    let closed = storage.shutdown();
    match closed {
        Ok(()) => tracing::info!(lsn = lsn_note, "final checkpoint written; storage closed"),
        Err(e) => {
            drop(pid);
            return Err(format!("storage shutdown failed: {e}"));
        }
    }
    drop(pid);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globals(args: &[&str]) -> Arc<GlobalVars> {
        let argv: Vec<OsString> = ["basaltd", "--no-defaults"]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect();
        Loader::from_process()
            .load(&argv)
            .expect("options load")
            .globals
    }

    #[test]
    fn thread_cache_size_is_autosized_from_max_connections_unless_set() {
        let g = globals(&[]);
        assert_eq!(thread_cache_size(&g), 9, "8 + 151 / 100");
        let g = globals(&["--max-connections=1000"]);
        assert_eq!(thread_cache_size(&g), 18);
        // SHOW VARIABLES reports the value in force.
        assert_eq!(g.get(keys::THREAD_CACHE_SIZE), 18);
        let g = globals(&["--max-connections=50000"]);
        assert_eq!(thread_cache_size(&g), 100, "autosizing stops at 100");
        let g = globals(&["--max-connections=1000", "--thread-cache-size=3"]);
        assert_eq!(thread_cache_size(&g), 3, "an explicit value wins");
        let g = globals(&["--thread-cache-size=0"]);
        assert_eq!(thread_cache_size(&g), 0);
    }

    #[test]
    fn innodb_flush_method_reaches_the_data_files() {
        let dir = Path::new("/tmp/basalt-flush-method");
        let method = |args: &[&str]| {
            let c = storage_config(&globals(args), dir);
            (c.direct_data_files, c.skip_fsync_after_direct_writes)
        };
        assert_eq!(method(&[]), (true, false), "O_DIRECT by default");
        assert_eq!(method(&["--innodb-flush-method=fsync"]), (false, false));
        assert_eq!(method(&["--innodb-flush-method=O_DIRECT"]), (true, false));
        assert_eq!(
            method(&["--innodb-flush-method=O_DIRECT_NO_FSYNC"]),
            (true, true)
        );
    }
}
