//! `--help`, `--version` and `--print-defaults` output.

use std::fmt::Write as _;

use super::Loader;
use crate::sysvar::{registry, SysValue, SysVarKind, VERSION, VERSION_COMMENT};

/// `basaltd --version`, in the shape of `mysqld --version`.
pub fn version_text() -> String {
    format!(
        "basaltd  Ver {VERSION} for {} on {} ({VERSION_COMMENT})",
        SysValue::from_default(crate::sysvar::keys::VERSION_COMPILE_OS.def()),
        std::env::consts::ARCH
    )
}

impl Loader {
    /// `basaltd --help`: usage, the files this loader searches, the
    /// command-line-only options and every variable settable at startup with
    /// its default, range and whether `SET GLOBAL` can change it.
    pub fn help_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", version_text());
        out.push_str("Usage: basaltd [OPTIONS]\n\n");
        out.push_str("Option files read, in order (groups [mysqld] and [basaltd]):\n");
        for file in &self.system_files {
            let _ = writeln!(out, "  {}", file.display());
        }
        out.push_str("  the --defaults-extra-file, if given\n");
        if let Some(user) = &self.user_file {
            let _ = writeln!(out, "  {}", user.display());
        }
        out.push_str(
            "Within and across files the last value wins; the command line overrides \
             every file.\n\n",
        );
        out.push_str("Command-line-only options:\n");
        for (usage, text) in [
            ("--no-defaults", "Read no option file."),
            (
                "--defaults-file=FILE",
                "Read only FILE (and --defaults-extra-file).",
            ),
            (
                "--defaults-extra-file=FILE",
                "Also read FILE, after the system files and before the user file.",
            ),
            (
                "--print-defaults",
                "Print the options the option files give, then exit.",
            ),
            ("--help, -?", "Print this help, then exit."),
            ("--version, -V", "Print the version, then exit."),
        ] {
            let _ = writeln!(out, "  {usage:<28} {text}");
        }
        out.push_str(
            "\nVariables (--name=value; '-' and '_' are interchangeable; booleans also take \
             --name, --skip-name, --disable-name, --enable-name;\n\
             a 'loose-' prefix makes an unknown option a warning instead of an error):\n",
        );
        for def in registry().iter().filter(|d| d.startup) {
            let placeholder = match def.kind {
                SysVarKind::Bool => "[=ON|OFF]",
                SysVarKind::Path => "=PATH",
                SysVarKind::UInt { .. } | SysVarKind::Int { .. } | SysVarKind::Double { .. } => {
                    "=#"
                }
                _ => "=VALUE",
            };
            let _ = writeln!(out, "  --{}{placeholder}", def.name.replace('_', "-"));
            let _ = writeln!(out, "      {}", def.description);
            let _ = writeln!(
                out,
                "      Default: {}. Accepts: {}.{}",
                display_default(&SysValue::from_default(def)),
                def.range_text(),
                if def.dynamic {
                    " Changeable with SET GLOBAL."
                } else {
                    ""
                }
            );
        }
        out
    }
}

fn display_default(value: &SysValue) -> String {
    match value.to_string() {
        s if s.is_empty() => "(empty)".to_string(),
        s => s,
    }
}

/// `--print-defaults` output: the arguments the option files amount to
/// (see [`super::Command::PrintDefaults`]).
pub fn print_defaults_text(arguments: &[String]) -> String {
    let mut out = String::from("basaltd would have been started with the following arguments:\n");
    out.push_str(&arguments.join(" "));
    out.push('\n');
    out
}
