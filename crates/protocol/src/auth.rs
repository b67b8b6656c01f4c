//! Authentication plugins: `mysql_native_password` and `caching_sha2_password`.
//!
//! ```text
//! native:       client sends SHA1(pw) XOR SHA1(scramble || SHA1(SHA1(pw)))
//!               server stores SHA1(SHA1(pw)) and checks SHA1(resp XOR SHA1(scramble || stored)) == stored
//!
//! caching_sha2: client sends SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || scramble)
//!   fast path   server has SHA256(SHA256(pw)) cached from an earlier full login:
//!               check as above, answer 0x01 0x03 (fast_auth_success), then OK
//!   full path   no cache entry: answer 0x01 0x04 (perform_full_authentication);
//!               client sends 0x02 (request public key)  -> server 0x01 + PEM key
//!               client sends RSA-OAEP-SHA1((pw || 0x00) XOR scramble)
//!               server decrypts, verifies against the stored SHA-256-crypt
//!               digest, caches SHA256(SHA256(pw)), answers OK
//! ```
//!
//! The caching_sha2 stored form is MySQL's own, so accounts can move between
//! the two servers: `$A$005$` + 20 salt bytes + 43 characters of
//! SHA-256-crypt (Drepper's algorithm) with `005 x 1000` rounds.
//!
//! The cache is self-invalidating: an entry remembers the stored string it
//! was derived from and is ignored once the account's string changes (ALTER
//! USER); [`AuthCache::forget`] drops entries eagerly (DROP USER, FLUSH
//! PRIVILEGES).

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use parking_lot::Mutex;
use rand::RngCore;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePublicKey, LineEnding};
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};
use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::error::ProtocolError;

/// Length of the handshake scramble (nonce).
pub const SCRAMBLE_LEN: usize = 20;

/// `caching_sha2_password` protocol bytes (after the 0x01 AuthMoreData header).
pub const CACHING_SHA2_FAST_AUTH_SUCCESS: u8 = 0x03;
/// Ask the client for the full password.
pub const CACHING_SHA2_PERFORM_FULL_AUTH: u8 = 0x04;
/// Client request for the server's RSA public key.
pub const CACHING_SHA2_REQUEST_PUBLIC_KEY: u8 = 0x02;

/// Authentication plugins Basalt implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthPlugin {
    /// `mysql_native_password`.
    NativePassword,
    /// `caching_sha2_password`.
    CachingSha2Password,
}

impl AuthPlugin {
    /// The plugin's protocol name.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
        }
    }

    /// Parses a plugin name.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"mysql_native_password" => Some(AuthPlugin::NativePassword),
            b"caching_sha2_password" => Some(AuthPlugin::CachingSha2Password),
            _ => None,
        }
    }

    /// The stored authentication string for `password` under this plugin.
    pub fn stored_form(self, password: &str) -> Vec<u8> {
        match self {
            AuthPlugin::NativePassword => native_password_hash(password),
            AuthPlugin::CachingSha2Password => caching_sha2_password_hash(password),
        }
    }
}

impl fmt::Display for AuthPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A 20-byte handshake nonce.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Scramble(pub [u8; SCRAMBLE_LEN]);

impl fmt::Debug for Scramble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scramble(..)")
    }
}

impl Scramble {
    /// A fresh nonce from the operating system's CSPRNG. Bytes are folded
    /// into 1..=127 without `$`, as MySQL does, because clients treat the
    /// second half as a NUL-terminated string.
    pub fn generate() -> Self {
        let mut s = [0u8; SCRAMBLE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut s);
        fold_salt(&mut s);
        Scramble(s)
    }
}

fn fold_salt(bytes: &mut [u8]) {
    for b in bytes {
        *b &= 0x7F;
        if *b == 0 || *b == b'$' {
            *b += 1;
        }
    }
}

/// Compares without an early exit, so timing does not reveal the prefix length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `SHA1(SHA1(password))`, the native stored form (empty for an empty password).
pub fn native_password_hash(password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    Sha1::digest(Sha1::digest(password.as_bytes())).to_vec()
}

/// What a client computes for `mysql_native_password` (used by tests and tools).
pub fn native_scramble_response(password: &str, scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password.as_bytes());
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(stage2);
    let mask = h.finalize();
    stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

/// Verifies a `mysql_native_password` response against the stored form.
pub fn verify_native(stored: &[u8], scramble: &[u8], response: &[u8]) -> bool {
    if stored.is_empty() || response.is_empty() {
        return stored.is_empty() && response.is_empty();
    }
    if stored.len() != 20 || response.len() != 20 {
        return false;
    }
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(stored);
    let mask = h.finalize();
    let stage1: Vec<u8> = response
        .iter()
        .zip(mask.iter())
        .map(|(a, b)| a ^ b)
        .collect();
    constant_time_eq(&Sha1::digest(&stage1), stored)
}

/// What a client computes for the `caching_sha2_password` fast path.
pub fn sha2_scramble_response(password: &str, scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha256::digest(password.as_bytes());
    let stage2 = Sha256::digest(stage1);
    let mut h = Sha256::new();
    h.update(stage2);
    h.update(scramble);
    let mask = h.finalize();
    stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

/// Checks a caching_sha2 fast-path response against a cached
/// `SHA256(SHA256(password))`.
pub fn verify_sha2_scramble(cached_stage2: &[u8; 32], scramble: &[u8], response: &[u8]) -> bool {
    if response.len() != 32 {
        return false;
    }
    let mut h = Sha256::new();
    h.update(cached_stage2);
    h.update(scramble);
    let mask = h.finalize();
    let stage1: Vec<u8> = response
        .iter()
        .zip(mask.iter())
        .map(|(a, b)| a ^ b)
        .collect();
    constant_time_eq(&Sha256::digest(&stage1), cached_stage2)
}

/// `SHA256(SHA256(password))`, the value the fast-path cache holds.
pub fn sha2_stage2(password: &[u8]) -> [u8; 32] {
    Sha256::digest(Sha256::digest(password)).into()
}

const SHA2_PREFIX: &[u8] = b"$A$";
const SHA2_SALT_LEN: usize = 20;
const SHA2_DIGEST_LEN: usize = 43;
/// Default `caching_sha2_password_digest_rounds` divided by 1000.
const SHA2_DEFAULT_ROUNDS_K: u32 = 5;

/// The caching_sha2 stored form of `password` with a fresh salt
/// (empty for an empty password).
pub fn caching_sha2_password_hash(password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let mut salt = [0u8; SHA2_SALT_LEN];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    fold_salt(&mut salt);
    caching_sha2_password_hash_with_salt(password, &salt, SHA2_DEFAULT_ROUNDS_K)
}

/// The caching_sha2 stored form with a given salt and `rounds_k x 1000` rounds.
pub fn caching_sha2_password_hash_with_salt(password: &str, salt: &[u8], rounds_k: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(7 + salt.len() + SHA2_DIGEST_LEN);
    out.extend_from_slice(SHA2_PREFIX);
    out.extend_from_slice(format!("{rounds_k:03X}$").as_bytes());
    out.extend_from_slice(salt);
    out.extend_from_slice(&sha256_crypt(password.as_bytes(), salt, rounds_k * 1000));
    out
}

/// Checks a cleartext password (from RSA or TLS full authentication)
/// against a caching_sha2 stored form.
pub fn verify_caching_sha2_password(stored: &[u8], password: &[u8]) -> bool {
    if stored.is_empty() || password.is_empty() {
        return stored.is_empty() && password.is_empty();
    }
    // $A$ + 3 hex digits + $ + salt + digest
    if stored.len() != 7 + SHA2_SALT_LEN + SHA2_DIGEST_LEN
        || !stored.starts_with(SHA2_PREFIX)
        || stored[6] != b'$'
    {
        return false;
    }
    let Some(rounds_k) = std::str::from_utf8(&stored[3..6])
        .ok()
        .and_then(|s| u32::from_str_radix(s, 16).ok())
        .filter(|k| (1..=0xFFF).contains(k))
    else {
        return false;
    };
    let salt = &stored[7..7 + SHA2_SALT_LEN];
    let digest = &stored[7 + SHA2_SALT_LEN..];
    constant_time_eq(&sha256_crypt(password, salt, rounds_k * 1000), digest)
}

/// SHA-256-crypt (Drepper's "Unix crypt using SHA-256"), returning the 43
/// base-64 characters of the digest. Salt length is not capped at 16, as in
/// MySQL's implementation.
pub fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> Vec<u8> {
    let p = password;
    let s = salt;
    let b = {
        let mut h = Sha256::new();
        h.update(p);
        h.update(s);
        h.update(p);
        h.finalize()
    };
    let mut a = Sha256::new();
    a.update(p);
    a.update(s);
    let mut n = p.len();
    while n > 32 {
        a.update(b);
        n -= 32;
    }
    a.update(&b[..n]);
    let mut n = p.len();
    while n > 0 {
        if n & 1 == 1 {
            a.update(b);
        } else {
            a.update(p);
        }
        n >>= 1;
    }
    let mut c = a.finalize();

    let dp = {
        let mut h = Sha256::new();
        for _ in 0..p.len() {
            h.update(p);
        }
        h.finalize()
    };
    let p_seq: Vec<u8> = dp.iter().copied().cycle().take(p.len()).collect();
    let ds = {
        let mut h = Sha256::new();
        for _ in 0..16 + usize::from(c[0]) {
            h.update(s);
        }
        h.finalize()
    };
    let s_seq: Vec<u8> = ds.iter().copied().cycle().take(s.len()).collect();

    for i in 0..rounds {
        let mut h = Sha256::new();
        if i & 1 == 1 {
            h.update(&p_seq);
        } else {
            h.update(c);
        }
        if i % 3 != 0 {
            h.update(&s_seq);
        }
        if i % 7 != 0 {
            h.update(&p_seq);
        }
        if i & 1 == 1 {
            h.update(c);
        } else {
            h.update(&p_seq);
        }
        c = h.finalize();
    }

    const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::with_capacity(SHA2_DIGEST_LEN);
    let mut put = |b2: u8, b1: u8, b0: u8, n: usize| {
        let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
        for _ in 0..n {
            out.push(ALPHABET[(w & 0x3F) as usize]);
            w >>= 6;
        }
    };
    const ORDER: [(usize, usize, usize); 10] = [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ];
    for (x, y, z) in ORDER {
        put(c[x], c[y], c[z], 4);
    }
    put(0, c[31], c[30], 3);
    out
}

/// Server-wide cache of `SHA256(SHA256(password))` for caching_sha2 accounts
/// that authenticated fully since the server started.
#[derive(Debug, Default)]
pub struct AuthCache {
    entries: Mutex<HashMap<(String, String), CacheEntry>>,
}

#[derive(Debug)]
struct CacheEntry {
    auth_string: Vec<u8>,
    stage2: [u8; 32],
}

impl AuthCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached digest for `(user, host)` if it was derived from `auth_string`.
    pub fn get(&self, user: &str, host: &str, auth_string: &[u8]) -> Option<[u8; 32]> {
        let entries = self.entries.lock();
        entries
            .get(&(user.to_owned(), host.to_owned()))
            .filter(|e| e.auth_string == auth_string)
            .map(|e| e.stage2)
    }

    /// Remembers a successful full authentication.
    pub fn insert(&self, user: &str, host: &str, auth_string: &[u8], stage2: [u8; 32]) {
        self.entries.lock().insert(
            (user.to_owned(), host.to_owned()),
            CacheEntry {
                auth_string: auth_string.to_vec(),
                stage2,
            },
        );
    }

    /// Drops the entry of one account (`DROP USER`, `ALTER USER`).
    pub fn forget(&self, user: &str, host: &str) {
        self.entries
            .lock()
            .remove(&(user.to_owned(), host.to_owned()));
    }

    /// Drops every entry (`FLUSH PRIVILEGES`).
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// The server's RSA key pair for caching_sha2 full authentication without TLS.
pub struct RsaKeys {
    private: RsaPrivateKey,
    public_pem: String,
}

impl fmt::Debug for RsaKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RsaKeys").finish_non_exhaustive()
    }
}

/// File names MySQL uses in the data directory.
pub const PRIVATE_KEY_FILE: &str = "private_key.pem";
/// Public half, SubjectPublicKeyInfo PEM.
pub const PUBLIC_KEY_FILE: &str = "public_key.pem";

impl RsaKeys {
    /// Generates a key pair of `bits` bits (MySQL uses 2048).
    pub fn generate(bits: usize) -> Result<Self, ProtocolError> {
        let private = RsaPrivateKey::new(&mut rand::rngs::OsRng, bits)
            .map_err(|e| ProtocolError::Rsa(e.to_string()))?;
        Self::from_private(private)
    }

    /// Loads a private key in PKCS#1 (`BEGIN RSA PRIVATE KEY`) or PKCS#8
    /// (`BEGIN PRIVATE KEY`) PEM; the public key is derived from it.
    pub fn from_private_pem(pem: &str) -> Result<Self, ProtocolError> {
        let private = RsaPrivateKey::from_pkcs1_pem(pem)
            .or_else(|_| RsaPrivateKey::from_pkcs8_pem(pem))
            .map_err(|e| ProtocolError::Rsa(e.to_string()))?;
        Self::from_private(private)
    }

    fn from_private(private: RsaPrivateKey) -> Result<Self, ProtocolError> {
        let public_pem = RsaPublicKey::from(&private)
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| ProtocolError::Rsa(e.to_string()))?;
        Ok(RsaKeys {
            private,
            public_pem,
        })
    }

    /// Loads `private_key.pem` from `dir`, or generates a 2048-bit pair and
    /// writes `private_key.pem` (mode 0600) and `public_key.pem` there.
    pub fn load_or_generate(dir: &Path) -> Result<Self, ProtocolError> {
        Self::load_or_generate_bits(dir, 2048)
    }

    pub(crate) fn load_or_generate_bits(dir: &Path, bits: usize) -> Result<Self, ProtocolError> {
        let private_path = dir.join(PRIVATE_KEY_FILE);
        match std::fs::read_to_string(&private_path) {
            Ok(pem) => Self::from_private_pem(&pem),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let keys = Self::generate(bits)?;
                let private_pem = keys
                    .private
                    .to_pkcs1_pem(LineEnding::LF)
                    .map_err(|e| ProtocolError::Rsa(e.to_string()))?;
                write_private(&private_path, private_pem.as_bytes())?;
                std::fs::write(dir.join(PUBLIC_KEY_FILE), keys.public_pem.as_bytes())?;
                tracing::info!(dir = %dir.display(), "generated RSA key pair for caching_sha2_password");
                Ok(keys)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The public key as SubjectPublicKeyInfo PEM (what clients request).
    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// Size of a ciphertext in bytes.
    pub fn modulus_len(&self) -> usize {
        use rsa::traits::PublicKeyParts;
        self.private.size()
    }

    /// Decrypts an RSA-OAEP (SHA-1) ciphertext.
    pub fn decrypt(&self, ciphertext: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        self.private
            .decrypt(Oaep::new::<Sha1>(), ciphertext)
            .map_err(|e| ProtocolError::Rsa(e.to_string()))
    }

    /// Encrypts with the public key, as a client does.
    pub fn encrypt(&self, plaintext: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        RsaPublicKey::from(&self.private)
            .encrypt(&mut rand::rngs::OsRng, Oaep::new::<Sha1>(), plaintext)
            .map_err(|e| ProtocolError::Rsa(e.to_string()))
    }
}

pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(bytes)
}

/// Recovers the password from a full-authentication payload: the plaintext
/// is `(password || 0x00) XOR scramble` (scramble repeated).
pub fn unscramble_password(plain: &[u8], scramble: &[u8]) -> Vec<u8> {
    let mut pw: Vec<u8> = plain
        .iter()
        .zip(scramble.iter().cycle())
        .map(|(a, b)| a ^ b)
        .collect();
    if pw.last() == Some(&0) {
        pw.pop();
    }
    pw
}

#[cfg(test)]
mod tests;
