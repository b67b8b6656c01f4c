//! TLS for `CLIENT_SSL`: certificate sources and the rustls acceptor.
//!
//! ```text
//!   client                               server
//!   <------------------ HandshakeV10 (CLIENT_SSL offered), seq 0
//!   SSLRequest (32 bytes, CLIENT_SSL), seq 1 ------------------>
//!   <=============== TLS handshake (rustls, ring) ===============>
//!   HandshakeResponse41 over TLS, seq 2 ----------------------->
//!   ... authentication and commands continue inside TLS ...
//! ```
//!
//! Over TLS, caching_sha2 full authentication takes the password in clear
//! text (the channel is encrypted); without TLS it must come RSA-encrypted.
//! Like MySQL's `auto_generate_certs`, a data directory without
//! `server-cert.pem`/`server-key.pem` gets a fresh self-signed pair.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::ProtocolError;

/// Certificate file in the data directory.
pub const SERVER_CERT_FILE: &str = "server-cert.pem";
/// Private key file in the data directory.
pub const SERVER_KEY_FILE: &str = "server-key.pem";

/// Common name of generated certificates (MySQL uses the same style).
const GENERATED_CN: &str = "Basalt_Server_Auto_Generated_Certificate";

/// Where the server's TLS identity comes from.
#[derive(Debug, Clone)]
pub enum TlsSource {
    /// No TLS: `CLIENT_SSL` is not offered.
    Disabled,
    /// A self-signed certificate generated in memory at startup.
    SelfSigned,
    /// Load `server-cert.pem` / `server-key.pem` from this directory,
    /// generating and writing a self-signed pair if they are missing.
    Dir(PathBuf),
    /// A ready rustls configuration.
    Config(Arc<ServerConfig>),
}

fn tls_err(e: impl std::fmt::Display) -> ProtocolError {
    ProtocolError::Tls(e.to_string())
}

/// A self-signed certificate chain and its PKCS#8 key.
pub fn self_signed() -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ProtocolError>
{
    let (cert_pem, key_pem) = generate_pem()?;
    parse_pem(cert_pem.as_bytes(), key_pem.as_bytes())
}

fn generate_pem() -> Result<(String, String), ProtocolError> {
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned()]).map_err(tls_err)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, GENERATED_CN);
    let key = rcgen::KeyPair::generate().map_err(tls_err)?;
    let cert = params.self_signed(&key).map_err(tls_err)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn parse_pem(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ProtocolError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(tls_err)?;
    if certs.is_empty() {
        return Err(ProtocolError::Tls("no certificate in PEM".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(tls_err)?;
    Ok((certs, key))
}

fn load_or_generate(
    dir: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ProtocolError> {
    let cert_path = dir.join(SERVER_CERT_FILE);
    let key_path = dir.join(SERVER_KEY_FILE);
    if cert_path.exists() || key_path.exists() {
        let cert = std::fs::read(&cert_path)?;
        let key = std::fs::read(&key_path)?;
        return parse_pem(&cert, &key);
    }
    let (cert_pem, key_pem) = generate_pem()?;
    crate::auth::write_private(&key_path, key_pem.as_bytes())?;
    std::fs::write(&cert_path, cert_pem.as_bytes())?;
    tracing::info!(dir = %dir.display(), "generated self-signed TLS certificate");
    parse_pem(cert_pem.as_bytes(), key_pem.as_bytes())
}

fn server_config(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, ProtocolError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(tls_err)?;
    Ok(Arc::new(config))
}

/// The server's TLS configuration; connections run their handshake with
/// it on their own thread (blocking rustls over the socket).
#[derive(Clone)]
pub(crate) struct Acceptor(Arc<ServerConfig>);

impl Acceptor {
    /// The rustls configuration for a new server connection.
    pub(crate) fn config(&self) -> Arc<ServerConfig> {
        self.0.clone()
    }
}

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Acceptor(..)")
    }
}

/// Builds the acceptor for `source`, or `None` when TLS is disabled.
pub(crate) fn acceptor(source: &TlsSource) -> Result<Option<Acceptor>, ProtocolError> {
    let config = match source {
        TlsSource::Disabled => return Ok(None),
        TlsSource::Config(c) => c.clone(),
        TlsSource::SelfSigned => {
            let (certs, key) = self_signed()?;
            server_config(certs, key)?
        }
        TlsSource::Dir(dir) => {
            let (certs, key) = load_or_generate(dir)?;
            server_config(certs, key)?
        }
    };
    Ok(Some(Acceptor(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datadir_certificate_is_generated_once_then_loaded() {
        let dir = tempfile::tempdir().unwrap();
        assert!(acceptor(&TlsSource::Dir(dir.path().to_owned()))
            .unwrap()
            .is_some());
        let cert = std::fs::read_to_string(dir.path().join(SERVER_CERT_FILE)).unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(dir.path().join(SERVER_KEY_FILE).exists());
        acceptor(&TlsSource::Dir(dir.path().to_owned())).unwrap();
        let again = std::fs::read_to_string(dir.path().join(SERVER_CERT_FILE)).unwrap();
        assert_eq!(cert, again, "an existing certificate is reused");
        // A broken key file is an error, not a silent regeneration.
        std::fs::write(dir.path().join(SERVER_KEY_FILE), "garbage").unwrap();
        assert!(acceptor(&TlsSource::Dir(dir.path().to_owned())).is_err());
        assert!(acceptor(&TlsSource::Disabled).unwrap().is_none());
    }
}
