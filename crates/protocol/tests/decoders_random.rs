//! The fuzz targets' decoders on seeded random input, in the normal suite
//! (stable toolchain). `BASALT_TEST_SEED` replays, `BASALT_FUZZ_ITERS` scales.
//! Properties: no decoder panics; framing and length-encoding round-trip
//! against a plain `Vec` model and fail on the first difference.

mod common;

use basalt_protocol::command::{parse_execute, Command};
use basalt_protocol::handshake::{ChangeUser, HandshakeResponse};
use basalt_protocol::packet::{put_lenenc_int, Decoder, PacketBuf, PacketReader, MAX_CHUNK};
use basalt_protocol::value::decode_binary_param;
use basalt_protocol::Capabilities;
use common::seed;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn iterations() -> usize {
    std::env::var("BASALT_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
        * 10
}

fn noise(rng: &mut SmallRng, max: usize) -> Vec<u8> {
    let n = rng.gen_range(0..=max);
    (0..n).map(|_| rng.gen()).collect()
}

#[test]
fn packet_reader_survives_random_streams() {
    let seed = seed("packet_reader_survives_random_streams");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..iterations() {
        let bytes = noise(&mut rng, 64);
        let max = rng.gen_range(0..100);
        let mut r = PacketReader::new(&bytes[..]);
        let mut payload = Vec::new();
        // Read until an error; every Ok must respect the limit.
        for _ in 0..8 {
            match r.read(&mut payload, max) {
                Ok(_) => assert!(payload.len() <= max, "seed {seed}"),
                Err(_) => break,
            }
        }
    }
}

#[test]
fn framing_round_trips_against_a_vec_model() {
    let seed = seed("framing_round_trips_against_a_vec_model");
    let mut rng = SmallRng::seed_from_u64(seed);
    for round in 0..200 {
        // Mostly small packets; every 50th round one around the chunk boundary.
        let sizes: Vec<usize> = (0..rng.gen_range(1..6))
            .map(|i| {
                if round % 50 == 0 && i == 0 {
                    MAX_CHUNK - 1 + rng.gen_range(0..3)
                } else {
                    rng.gen_range(0..300)
                }
            })
            .collect();
        let model: Vec<Vec<u8>> = sizes
            .iter()
            .map(|&n| {
                let mut v = vec![0u8; n];
                rng.fill(&mut v[..]);
                v
            })
            .collect();
        let start_seq: u8 = rng.gen();
        let mut buf = PacketBuf::new(start_seq);
        for p in &model {
            buf.packet(p);
        }
        let bytes = buf.take();
        // A small buffer makes packets straddle refills.
        let capacity = rng.gen_range(1..64);
        let mut r = PacketReader::new(std::io::BufReader::with_capacity(capacity, &bytes[..]));
        r.set_next_seq(start_seq);
        let mut got = Vec::new();
        for (i, want) in model.iter().enumerate() {
            r.read(&mut got, usize::MAX).unwrap();
            assert!(got == *want, "packet {i} differs (seed {seed})");
        }
        assert!(
            r.read(&mut got, usize::MAX).is_err(),
            "trailing data (seed {seed})"
        );
    }
}

#[test]
fn lenenc_ints_round_trip_against_the_model() {
    let seed = seed("lenenc_ints_round_trip_against_the_model");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..iterations() {
        let model: Vec<u64> = (0..rng.gen_range(0..20))
            .map(|_| match rng.gen_range(0..4) {
                0 => rng.gen_range(0..251),
                1 => rng.gen_range(251..1 << 16),
                2 => rng.gen_range(1 << 16..1 << 24),
                _ => rng.gen(),
            })
            .collect();
        let mut out = Vec::new();
        for &v in &model {
            put_lenenc_int(&mut out, v);
        }
        let mut d = Decoder::new(&out);
        for (i, &v) in model.iter().enumerate() {
            assert_eq!(d.lenenc_int("v").unwrap(), v, "value {i} (seed {seed})");
        }
        assert!(d.is_empty());
    }
}

#[test]
fn handshake_and_command_decoders_never_panic() {
    let seed = seed("handshake_and_command_decoders_never_panic");
    let mut rng = SmallRng::seed_from_u64(seed);
    let valid =
        common::raw::handshake_response(common::raw::CLIENT_CAPS, "user", &[3; 20], Some("db"));
    for _ in 0..iterations() {
        let _ = HandshakeResponse::parse(&noise(&mut rng, 120));
        let mut mutated = valid.clone();
        for _ in 0..rng.gen_range(1..8) {
            let at = rng.gen_range(0..mutated.len());
            mutated[at] = rng.gen();
        }
        mutated.truncate(rng.gen_range(0..=mutated.len()));
        let _ = HandshakeResponse::parse(&mutated);
        let caps = Capabilities(rng.gen());
        let _ = ChangeUser::parse(&noise(&mut rng, 80), caps);
        let _ = Command::parse(&noise(&mut rng, 40));
    }
}

#[test]
fn execute_and_parameter_decoders_never_panic() {
    let seed = seed("execute_and_parameter_decoders_never_panic");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..iterations() {
        let params = rng.gen_range(0..12);
        let mut bound = if rng.gen_bool(0.5) {
            Some((0..params).map(|_| (rng.gen(), rng.gen())).collect())
        } else {
            None
        };
        let long: Vec<bool> = (0..params).map(|_| rng.gen_bool(0.1)).collect();
        let body = noise(&mut rng, 120);
        if let Ok(req) = parse_execute(&body, params, &mut bound, &long) {
            assert_eq!(req.params.len(), params, "seed {seed}");
        }
        let ty: u8 = rng.gen();
        let bytes = noise(&mut rng, 16);
        let _ = decode_binary_param(ty, rng.gen(), &mut Decoder::new(&bytes));
    }
}
