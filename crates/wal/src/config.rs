//! Redo log options (`innodb_log_*`) and their MySQL ranges.

use std::path::PathBuf;

use crate::LogError;

/// Smallest `innodb_log_file_size` (MySQL 8.0: 4 MiB).
pub const MIN_LOG_FILE_SIZE: u64 = 4 << 20;
/// Default `innodb_log_file_size` (MySQL 5.7 / 8.0: 48 MiB).
pub const DEFAULT_LOG_FILE_SIZE: u64 = 48 << 20;
/// Largest combined size of the log files (MySQL: 512 GiB).
pub const MAX_LOG_GROUP_SIZE: u64 = 512 << 30;
/// Smallest `innodb_log_files_in_group`.
pub const MIN_LOG_FILES: u32 = 2;
/// Largest `innodb_log_files_in_group`.
pub const MAX_LOG_FILES: u32 = 100;
/// Default `innodb_log_files_in_group`.
pub const DEFAULT_LOG_FILES: u32 = 2;
/// Smallest `innodb_log_buffer_size` (MySQL 8.0: 1 MiB).
pub const MIN_LOG_BUFFER_SIZE: usize = 1 << 20;
/// Largest `innodb_log_buffer_size` (MySQL 8.0: 4 GiB).
pub const MAX_LOG_BUFFER_SIZE: usize = 4 << 30;
/// Default `innodb_log_buffer_size` (MySQL 8.0: 16 MiB).
pub const DEFAULT_LOG_BUFFER_SIZE: usize = 16 << 20;
/// Largest `innodb_flush_log_at_timeout` in seconds.
pub const MAX_FLUSH_LOG_AT_TIMEOUT_SECS: u32 = 2700;

/// Default [`LogConfig::flusher_threads`].
pub const DEFAULT_FLUSHER_THREADS: usize = 2;
/// Largest [`LogConfig::flusher_threads`].
pub const MAX_FLUSHER_THREADS: usize = 8;

/// Configuration of the redo log, named after the MySQL options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// Directory holding `ib_logfile0..N-1` (`innodb_log_group_home_dir`).
    pub dir: PathBuf,
    /// Size of each log file in bytes (`innodb_log_file_size`): at least
    /// 4 MiB and a multiple of 4 KiB (the write unit).
    pub file_size: u64,
    /// Number of log files (`innodb_log_files_in_group`), 2..=100.
    pub files_in_group: u32,
    /// Size of the in-memory log buffer in bytes (`innodb_log_buffer_size`).
    pub buffer_size: usize,
    /// `innodb_flush_log_at_trx_commit`: 0, 1 (default) or 2. Changed at run
    /// time with [`crate::Log::set_flush_log_at_trx_commit`].
    pub flush_log_at_trx_commit: u8,
    /// `innodb_flush_log_at_timeout`: period of the background write+fsync
    /// in seconds (1..=2700, default 1).
    pub flush_log_at_timeout_secs: u32,
    /// `innodb_log_file_buffering`: write the log files through the OS
    /// page cache (true) or with O_DIRECT (false, the default; the OS cache
    /// is used anyway where the filesystem refuses O_DIRECT).
    pub file_buffering: bool,
    /// Log flusher threads (no MySQL option; default
    /// [`DEFAULT_FLUSHER_THREADS`], clamped to `1..=`[`MAX_FLUSHER_THREADS`]).
    /// With two, one round's write and fsync overlap the previous round's
    /// fsync (see "Group commit" in the crate documentation); one gives
    /// strictly sequential rounds.
    pub flusher_threads: usize,
}

impl LogConfig {
    /// The MySQL defaults with the log files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> LogConfig {
        LogConfig {
            dir: dir.into(),
            file_size: DEFAULT_LOG_FILE_SIZE,
            files_in_group: DEFAULT_LOG_FILES,
            buffer_size: DEFAULT_LOG_BUFFER_SIZE,
            flush_log_at_trx_commit: 1,
            flush_log_at_timeout_secs: 1,
            file_buffering: false,
            flusher_threads: DEFAULT_FLUSHER_THREADS,
        }
    }

    /// Checks every option against its MySQL range; the error names the
    /// option.
    pub fn validate(&self) -> Result<(), LogError> {
        let bad =
            |option: &'static str, reason: String| Err(LogError::InvalidConfig { option, reason });
        if self.file_size < MIN_LOG_FILE_SIZE {
            return bad(
                "innodb_log_file_size",
                format!(
                    "{} is below the minimum {}",
                    self.file_size, MIN_LOG_FILE_SIZE
                ),
            );
        }
        if !self
            .file_size
            .is_multiple_of(crate::format::WRITE_UNIT as u64)
        {
            return bad(
                "innodb_log_file_size",
                format!(
                    "{} is not a multiple of {}",
                    self.file_size,
                    crate::format::WRITE_UNIT
                ),
            );
        }
        if !(MIN_LOG_FILES..=MAX_LOG_FILES).contains(&self.files_in_group) {
            return bad(
                "innodb_log_files_in_group",
                format!(
                    "{} is outside {}..={}",
                    self.files_in_group, MIN_LOG_FILES, MAX_LOG_FILES
                ),
            );
        }
        let total = self
            .file_size
            .saturating_mul(u64::from(self.files_in_group));
        if total > MAX_LOG_GROUP_SIZE {
            return bad(
                "innodb_log_file_size",
                format!(
                    "innodb_log_file_size x innodb_log_files_in_group = {total} exceeds {MAX_LOG_GROUP_SIZE}"
                ),
            );
        }
        if !(MIN_LOG_BUFFER_SIZE..=MAX_LOG_BUFFER_SIZE).contains(&self.buffer_size) {
            return bad(
                "innodb_log_buffer_size",
                format!(
                    "{} is outside {}..={}",
                    self.buffer_size, MIN_LOG_BUFFER_SIZE, MAX_LOG_BUFFER_SIZE
                ),
            );
        }
        if self.flush_log_at_trx_commit > 2 {
            return bad(
                "innodb_flush_log_at_trx_commit",
                format!("{} is not 0, 1 or 2", self.flush_log_at_trx_commit),
            );
        }
        if !(1..=MAX_FLUSH_LOG_AT_TIMEOUT_SECS).contains(&self.flush_log_at_timeout_secs) {
            return bad(
                "innodb_flush_log_at_timeout",
                format!(
                    "{} is outside 1..={}",
                    self.flush_log_at_timeout_secs, MAX_FLUSH_LOG_AT_TIMEOUT_SECS
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option_of(cfg: &LogConfig) -> Option<&'static str> {
        match cfg.validate() {
            Ok(()) => None,
            Err(LogError::InvalidConfig { option, .. }) => Some(option),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    #[test]
    fn defaults_are_mysql_defaults_and_valid() {
        let cfg = LogConfig::new("/tmp/x");
        assert_eq!(cfg.file_size, 48 << 20);
        assert_eq!(cfg.files_in_group, 2);
        assert_eq!(cfg.buffer_size, 16 << 20);
        assert_eq!(cfg.flush_log_at_trx_commit, 1);
        assert_eq!(cfg.flush_log_at_timeout_secs, 1);
        assert_eq!(option_of(&cfg), None);
    }

    #[test]
    fn out_of_range_options_are_named() {
        let base = LogConfig::new("/tmp/x");
        let cases: Vec<(LogConfig, &str)> = vec![
            (
                LogConfig {
                    file_size: (4 << 20) - 4096,
                    ..base.clone()
                },
                "innodb_log_file_size",
            ),
            (
                LogConfig {
                    file_size: (4 << 20) + 512,
                    ..base.clone()
                },
                "innodb_log_file_size",
            ),
            (
                LogConfig {
                    files_in_group: 1,
                    ..base.clone()
                },
                "innodb_log_files_in_group",
            ),
            (
                LogConfig {
                    files_in_group: 101,
                    ..base.clone()
                },
                "innodb_log_files_in_group",
            ),
            (
                LogConfig {
                    file_size: 300 << 30,
                    files_in_group: 2,
                    ..base.clone()
                },
                "innodb_log_file_size",
            ),
            (
                LogConfig {
                    buffer_size: 1 << 19,
                    ..base.clone()
                },
                "innodb_log_buffer_size",
            ),
            (
                LogConfig {
                    flush_log_at_trx_commit: 3,
                    ..base.clone()
                },
                "innodb_flush_log_at_trx_commit",
            ),
            (
                LogConfig {
                    flush_log_at_timeout_secs: 0,
                    ..base.clone()
                },
                "innodb_flush_log_at_timeout",
            ),
        ];
        for (cfg, option) in cases {
            assert_eq!(option_of(&cfg), Some(option), "{cfg:?}");
        }
        assert_eq!(
            option_of(&LogConfig {
                files_in_group: 100,
                ..base.clone()
            }),
            None
        );
        assert_eq!(
            option_of(&LogConfig {
                file_size: 4 << 20,
                ..base
            }),
            None
        );
    }
}
