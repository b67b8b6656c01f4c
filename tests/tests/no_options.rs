//! `basaltd` with no options at all uses its embedded defaults: the data
//! directory `./data` under the working directory and port 3306 on
//! 127.0.0.1 (what `cargo run --release` does).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use basalt_tests::{basaltd_path, fixture_key};

#[test]
fn no_options_means_datadir_data_and_port_3306() {
    let cwd = tempfile::tempdir().unwrap();
    // A copy of the test key saves the RSA key generation.
    std::fs::create_dir_all(cwd.path().join("data")).unwrap();
    std::fs::copy(fixture_key(), cwd.path().join("data/private_key.pem")).unwrap();
    let log = cwd.path().join("stderr.log");
    let mut child = Command::new(basaltd_path())
        .current_dir(cwd.path())
        // No user option file, no options.
        .env("HOME", cwd.path())
        .env("BASALT_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let outcome = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("basaltd ready for connections") {
            break Ok(text);
        }
        if let Ok(Some(status)) = child.try_wait() {
            break Err((status, std::fs::read_to_string(&log).unwrap_or_default()));
        }
        assert!(
            Instant::now() < deadline,
            "neither ready nor exited:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    match outcome {
        Ok(text) => {
            assert!(
                text.contains("ready for connections: address 127.0.0.1 port 3306"),
                "{text}"
            );
            Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            let status = child.wait().unwrap();
            assert!(status.success());
        }
        // Port 3306 may be taken on this machine; the failure must then name it.
        Err((status, text)) => {
            assert!(!status.success());
            assert!(
                text.contains("cannot listen on 127.0.0.1 port 3306"),
                "{text}"
            );
        }
    }
    assert!(
        cwd.path().join("data/ibdata1").exists(),
        "the default datadir is ./data"
    );
    assert!(cwd.path().join("data/ib_logfile0").exists());
}
