use super::*;

#[test]
fn sha256_crypt_matches_independent_vectors() {
    // Produced by `openssl passwd -5 -salt ...` (5,000 rounds).
    assert_eq!(
        sha256_crypt(b"Hello world!", b"saltstring", 5000),
        b"5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5".to_vec()
    );
    assert_eq!(
        sha256_crypt(
            b"a much longer password that exceeds thirty-two bytes of input",
            b"abcdefghijklmnop",
            5000
        ),
        b"WgofN6.RJjE4Ef3ipF9Ms5XQzZNtpxCtPqSBChrxJbC".to_vec()
    );
}

#[test]
fn native_scramble_verifies_only_the_right_password() {
    let stored = native_password_hash("secret");
    assert_eq!(stored.len(), 20);
    let scramble = Scramble::generate();
    let good = native_scramble_response("secret", &scramble.0);
    assert!(verify_native(&stored, &scramble.0, &good));
    let bad = native_scramble_response("Secret", &scramble.0);
    assert!(!verify_native(&stored, &scramble.0, &bad));
    // The response is bound to the scramble.
    let other = Scramble::generate();
    assert!(!verify_native(&stored, &other.0, &good));
    // Empty passwords: only empty matches empty.
    assert!(verify_native(&[], &scramble.0, &[]));
    assert!(!verify_native(&[], &scramble.0, &good));
    assert!(!verify_native(&stored, &scramble.0, &[]));
    assert!(!verify_native(&stored, &scramble.0, &good[..19]));
}

#[test]
fn caching_sha2_stored_form_and_fast_path() {
    let stored = caching_sha2_password_hash("pw");
    assert_eq!(&stored[..7], b"$A$005$");
    assert_eq!(stored.len(), 70);
    assert!(verify_caching_sha2_password(&stored, b"pw"));
    assert!(!verify_caching_sha2_password(&stored, b"pW"));
    assert!(!verify_caching_sha2_password(&stored[..69], b"pw"));
    // Two hashes of one password differ by salt.
    assert_ne!(stored, caching_sha2_password_hash("pw"));

    let scramble = Scramble::generate();
    let stage2 = sha2_stage2(b"pw");
    let resp = sha2_scramble_response("pw", &scramble.0);
    assert!(verify_sha2_scramble(&stage2, &scramble.0, &resp));
    let wrong = sha2_scramble_response("px", &scramble.0);
    assert!(!verify_sha2_scramble(&stage2, &scramble.0, &wrong));
}

#[test]
fn scramble_bytes_are_printable_and_never_nul_or_dollar() {
    for _ in 0..200 {
        let s = Scramble::generate();
        assert!(s.0.iter().all(|&b| (1..=127).contains(&b) && b != b'$'));
    }
}

#[test]
fn auth_cache_ignores_entries_of_a_changed_password() {
    let cache = AuthCache::new();
    cache.insert("u", "h", b"old", [1; 32]);
    assert_eq!(cache.get("u", "h", b"old"), Some([1; 32]));
    assert_eq!(cache.get("u", "h", b"new"), None);
    assert_eq!(cache.get("u", "other", b"old"), None);
    cache.forget("u", "h");
    assert_eq!(cache.get("u", "h", b"old"), None);
}

#[test]
fn rsa_full_authentication_round_trip_and_datadir_keys() {
    // Generation path (a small key keeps the debug-build test fast).
    let dir = tempfile::tempdir().unwrap();
    let keys = RsaKeys::load_or_generate_bits(dir.path(), 768).unwrap();
    assert!(dir.path().join(PRIVATE_KEY_FILE).exists());
    let public = std::fs::read_to_string(dir.path().join(PUBLIC_KEY_FILE)).unwrap();
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    assert_eq!(public, keys.public_pem());
    // Loading again yields the same key, not a new one.
    let again = RsaKeys::load_or_generate(dir.path()).unwrap();
    assert_eq!(again.public_pem(), keys.public_pem());

    // Load path, with MySQL's 2048-bit PKCS#1 file.
    let fixture = include_str!("../../tests/fixtures/private_key.pem");
    let fixed_dir = tempfile::tempdir().unwrap();
    std::fs::write(fixed_dir.path().join(PRIVATE_KEY_FILE), fixture).unwrap();
    let keys = RsaKeys::load_or_generate(fixed_dir.path()).unwrap();
    assert_eq!(keys.modulus_len(), 256);
    assert!(
        !fixed_dir.path().join(PUBLIC_KEY_FILE).exists(),
        "loading must not write"
    );

    let scramble = Scramble::generate();
    let mut plain = b"secret\0".to_vec();
    for (b, s) in plain.iter_mut().zip(scramble.0.iter().cycle()) {
        *b ^= s;
    }
    let cipher = keys.encrypt(&plain).unwrap();
    assert_eq!(cipher.len(), keys.modulus_len());
    let back = keys.decrypt(&cipher).unwrap();
    assert_eq!(unscramble_password(&back, &scramble.0), b"secret");
    assert!(keys.decrypt(&cipher[1..]).is_err());
}
