//! Shared helpers: a sandbox directory per test with its own option-file
//! search list and environment, so no test reads the machine's files.

#![allow(dead_code)]

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use basalt_config::{ConfigError, Environment, GlobalVars, Loader, ServerOptions};
use tempfile::TempDir;

pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("create temp dir"),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `text` to `rel` (creating directories) and returns the path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// The system files are `etc/basalt.cnf` and `etc/basalt/basalt.cnf`,
    /// the user file `home/.basalt.cnf`, all inside the sandbox.
    pub fn loader(&self) -> Loader {
        Loader {
            system_files: vec![
                self.path("etc/basalt.cnf"),
                self.path("etc/basalt/basalt.cnf"),
            ],
            user_file: Some(self.path("home/.basalt.cnf")),
            environment: Environment {
                working_dir: self.dir.path().to_path_buf(),
                tmpdir: None,
                hostname: "testhost".to_string(),
                system_time_zone: "UTC".to_string(),
            },
        }
    }

    pub fn load(&self, args: &[&str]) -> Result<ServerOptions, ConfigError> {
        self.loader().load(&argv(args))
    }

    /// Loads with `--defaults-file=<rel>` after writing `text` there.
    pub fn load_file(&self, text: &str) -> Result<ServerOptions, ConfigError> {
        let path = self.write("my.cnf", text);
        self.load(&[&format!("--defaults-file={}", path.display())])
    }

    pub fn file_origin(&self, rel: &str, line: u32) -> String {
        format!("{}:{line}", self.path(rel).display())
    }
}

pub fn argv(args: &[&str]) -> Vec<OsString> {
    std::iter::once("basaltd")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect()
}

/// The `SHOW GLOBAL VARIABLES` text of one variable.
pub fn shown(globals: &GlobalVars, name: &str) -> String {
    globals.value(name).expect(name).to_string()
}

pub fn expect_err(result: Result<ServerOptions, ConfigError>) -> ConfigError {
    match result {
        Ok(opts) => panic!("expected an error, got {:?}", opts.command),
        Err(e) => e,
    }
}

pub fn display(path: &Path) -> String {
    path.display().to_string()
}
