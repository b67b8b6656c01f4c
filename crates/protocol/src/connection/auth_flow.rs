//! The authentication exchange, shared by the connection phase and
//! `COM_CHANGE_USER`.
//!
//! ```text
//!  client plugin != account plugin ?  --> AuthSwitchRequest(account plugin, scramble)
//!                                     <-- response for the account plugin
//!  native        verify scramble                                  -> Ok
//!  caching_sha2  empty password                                   -> Ok
//!                cache hit and scramble matches -> 0x01 0x03      -> Ok
//!                otherwise                      -> 0x01 0x04
//!                   <-- 0x02            --> 0x01 <public key PEM>
//!                   <-- RSA ciphertext  decrypt, verify, cache     -> Ok
//!                   (over TLS: <-- password + NUL in clear text, verify, cache -> Ok)
//! ```
//!
//! The caller sends the final OK (after opening the session) or ERR 1045.

use crate::auth::Scramble;
use crate::auth::{
    self, AuthPlugin, CACHING_SHA2_FAST_AUTH_SUCCESS, CACHING_SHA2_PERFORM_FULL_AUTH,
    CACHING_SHA2_REQUEST_PUBLIC_KEY,
};
use crate::backend::{AccountAuth, Backend};
use crate::connection::wire::{Disconnected, ReadDeadline};
use crate::connection::Connection;
use crate::handshake::{encode_auth_more_data, encode_auth_switch};

/// Largest packet accepted during authentication.
pub(crate) const AUTH_MAX_PACKET: usize = 1 << 20;

/// Why authentication did not succeed.
#[derive(Debug)]
pub(crate) enum AuthFailure {
    /// Wrong password or unknown account: ERR 1045.
    Denied {
        /// Whether the client supplied a password.
        using_password: bool,
    },
    /// The client went away.
    Disconnected,
}

impl From<Disconnected> for AuthFailure {
    fn from(_: Disconnected) -> Self {
        AuthFailure::Disconnected
    }
}

/// Libraries send a lone NUL byte for an empty password in some paths.
fn normalize(mut response: Vec<u8>) -> Vec<u8> {
    if response == [0] {
        response.clear();
    }
    response
}

impl<B: Backend> Connection<B> {
    /// Runs the exchange for `user` whose first response was computed for
    /// `client_plugin`. `deadline` bounds each read.
    pub(crate) fn authenticate(
        &mut self,
        user: &str,
        client_plugin: Option<&[u8]>,
        response: Vec<u8>,
        deadline: ReadDeadline,
    ) -> Result<(), AuthFailure> {
        let host = self.host.clone();
        let mut response = normalize(response);
        let client_plugin = match client_plugin {
            Some(name) => AuthPlugin::from_name(name),
            None => Some(AuthPlugin::NativePassword),
        };
        // An unknown account goes through the same exchange as a real one
        // against a random stored string, so replies do not reveal which
        // user names exist.
        let account = self.backend.lookup_account(user, &host).unwrap_or_else(|| {
            tracing::debug!(user, host = %host, "unknown account");
            let plugin = client_plugin.unwrap_or(self.shared.config.default_auth_plugin);
            let random = Scramble::generate();
            let secret = String::from_utf8_lossy(&random.0).into_owned();
            AccountAuth {
                plugin,
                auth_string: plugin.stored_form(&format!("unknown-{secret}")),
            }
        });
        if client_plugin != Some(account.plugin) {
            let s = self.wire.out.start();
            encode_auth_switch(account.plugin, &self.scramble, self.wire.out.body());
            self.wire.out.finish(s);
            response = normalize(self.wire.read(deadline, AUTH_MAX_PACKET)?.payload);
        }
        let stored = &account.auth_string;
        let scramble = self.scramble.0;
        let denied = |response: &[u8]| AuthFailure::Denied {
            using_password: !response.is_empty(),
        };
        match account.plugin {
            AuthPlugin::NativePassword => {
                if auth::verify_native(stored, &scramble, &response) {
                    Ok(())
                } else {
                    Err(denied(&response))
                }
            }
            AuthPlugin::CachingSha2Password => {
                if stored.is_empty() || response.is_empty() {
                    return if stored.is_empty() && response.is_empty() {
                        Ok(())
                    } else {
                        Err(denied(&response))
                    };
                }
                let cached = self.shared.auth_cache.get(user, &host, stored);
                if let Some(stage2) = cached {
                    if auth::verify_sha2_scramble(&stage2, &scramble, &response) {
                        self.more_data(&[CACHING_SHA2_FAST_AUTH_SUCCESS]);
                        return Ok(());
                    }
                }
                self.more_data(&[CACHING_SHA2_PERFORM_FULL_AUTH]);
                let mut payload = self.wire.read(deadline, AUTH_MAX_PACKET)?.payload;
                if payload == [CACHING_SHA2_REQUEST_PUBLIC_KEY] {
                    let pem = self.shared.rsa.public_pem().as_bytes().to_vec();
                    self.more_data(&pem);
                    payload = self.wire.read(deadline, AUTH_MAX_PACKET)?.payload;
                }
                let password = if self.secure {
                    // Inside TLS the client sends the password itself, NUL-terminated.
                    let mut pw = payload;
                    if pw.last() == Some(&0) {
                        pw.pop();
                    }
                    pw
                } else {
                    if payload.len() != self.shared.rsa.modulus_len() {
                        tracing::debug!(
                            user,
                            "caching_sha2 full authentication: not an RSA ciphertext"
                        );
                        return Err(denied(&response));
                    }
                    match self.shared.rsa.decrypt(&payload) {
                        Ok(plain) => auth::unscramble_password(&plain, &scramble),
                        Err(e) => {
                            tracing::debug!(user, error = %e, "caching_sha2 full authentication: decrypt failed");
                            return Err(denied(&response));
                        }
                    }
                };
                if auth::verify_caching_sha2_password(stored, &password) {
                    self.shared.auth_cache.insert(
                        user,
                        &host,
                        stored,
                        auth::sha2_stage2(&password),
                    );
                    Ok(())
                } else {
                    Err(denied(&response))
                }
            }
        }
    }

    fn more_data(&mut self, data: &[u8]) {
        let s = self.wire.out.start();
        encode_auth_more_data(data, self.wire.out.body());
        self.wire.out.finish(s);
    }
}
