//! Backend selection and `innodb_flush_method`.

use basalt_io::{
    force_posix_from_env, force_posix_value, open_io, select_io, FlushMethod, IoConfig, IoKind,
    PosixIo, UnknownFlushMethod, DEFAULT_POSIX_THREADS, DEFAULT_QUEUE_DEPTH,
};

use crate::common::{uring, ALLOW_NO_URING_ENV};

#[test]
fn flush_method_parses_mysql_names() {
    assert_eq!("fsync".parse::<FlushMethod>(), Ok(FlushMethod::Fsync));
    assert_eq!("O_DIRECT".parse::<FlushMethod>(), Ok(FlushMethod::ODirect));
    assert_eq!(
        "o_direct_no_fsync".parse::<FlushMethod>(),
        Ok(FlushMethod::ODirectNoFsync)
    );
    assert_eq!(
        " O_DIRECT ".parse::<FlushMethod>(),
        Ok(FlushMethod::ODirect)
    );
    let err = "O_DSYNC_ISH".parse::<FlushMethod>().unwrap_err();
    assert_eq!(
        err,
        UnknownFlushMethod {
            name: "O_DSYNC_ISH".into()
        }
    );
    assert!(err.to_string().contains("O_DIRECT_NO_FSYNC"), "{err}");
    for m in FlushMethod::ALL {
        assert_eq!(
            m.to_string().parse::<FlushMethod>(),
            Ok(m),
            "round trip of {m}"
        );
    }
    assert_eq!(FlushMethod::default(), FlushMethod::ODirect);
}

#[test]
fn flush_method_tells_how_to_open_and_sync_data_files() {
    use FlushMethod::*;
    assert_eq!(
        [Fsync, ODirect, ODirectNoFsync].map(|m| m.direct_data_files()),
        [false, true, true]
    );
    assert_eq!(
        [Fsync, ODirect, ODirectNoFsync].map(|m| m.skips_data_fsync()),
        [false, false, true]
    );
    assert_eq!(
        [Fsync, ODirect, ODirectNoFsync].map(|m| m.data_fsync_needed(false)),
        [true, true, false]
    );
    assert_eq!(
        [Fsync, ODirect, ODirectNoFsync].map(|m| m.data_fsync_needed(true)),
        [true, true, true]
    );
}

#[test]
fn io_config_defaults_follow_mysql() {
    let c = IoConfig::default();
    assert!(c.use_native_aio);
    assert_eq!(c.flush_method, FlushMethod::ODirect);
    assert_eq!(
        (c.queue_depth, c.posix_threads),
        (DEFAULT_QUEUE_DEPTH, DEFAULT_POSIX_THREADS)
    );
    assert_eq!((DEFAULT_QUEUE_DEPTH, DEFAULT_POSIX_THREADS), (64, 4));
}

#[test]
fn force_posix_env_values() {
    for v in ["1", "true", "ON", "yes "] {
        assert!(force_posix_value(Some(v)), "{v}");
    }
    for v in ["0", "", "false", "off", "2"] {
        assert!(!force_posix_value(Some(v)), "{v}");
    }
    assert!(!force_posix_value(None));
}

#[test]
fn selection_prefers_uring_and_falls_back_when_told() {
    let cfg = IoConfig {
        posix_threads: 2,
        ..IoConfig::default()
    };
    assert_eq!(
        select_io(&cfg, true).kind(),
        IoKind::Posix,
        "forced by the environment"
    );
    let off = IoConfig {
        use_native_aio: false,
        ..cfg
    };
    assert_eq!(
        select_io(&off, false).kind(),
        IoKind::Posix,
        "innodb_use_native_aio=OFF"
    );
    if uring(8).is_some() {
        assert_eq!(select_io(&cfg, false).kind(), IoKind::Uring);
        let want = if force_posix_from_env() {
            IoKind::Posix
        } else {
            IoKind::Uring
        };
        assert_eq!(
            open_io(&cfg).kind(),
            want,
            "open_io follows BASALT_FORCE_POSIX_IO"
        );
    } else {
        assert_eq!(
            select_io(&cfg, false).kind(),
            IoKind::Posix,
            "{ALLOW_NO_URING_ENV}=1: no io_uring here"
        );
    }
}

#[test]
fn posix_pool_has_the_requested_threads() {
    assert_eq!(PosixIo::new(3).threads(), 3);
    assert_eq!(PosixIo::new(0).threads(), 1, "at least one worker");
    assert_eq!(PosixIo::default().threads(), DEFAULT_POSIX_THREADS);
}

#[test]
fn uring_queue_depth_is_clamped() {
    if let Some(u) = uring(0) {
        assert_eq!(u.queue_depth(), 1);
    }
    if let Some(u) = uring(1 << 20) {
        assert_eq!(u.queue_depth(), basalt_io::MAX_QUEUE_DEPTH);
    }
}
