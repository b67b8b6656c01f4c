//! `DECIMAL`: exact fixed-point numbers of up to 65 digits, 30 after the
//! point, as MySQL.
//!
//! ```text
//!   Decimal { neg, int: [d0, d1, ...] (base 10^9, least significant first), scale }
//!   value = (-1)^neg * int / 10^scale          e.g. -12.50 = { neg, [1250], 2 }
//! ```
//!
//! Why not `rust_decimal`: it holds 28 significant digits, MySQL columns
//! and expressions hold 65. Arithmetic follows MySQL: `+ -` keep the larger
//! scale, `*` adds scales (capped at 30, rounded), `/` gives the dividend's
//! scale plus `div_precision_increment` (4), rounded half away from zero.
//! A result with more than 65 integer-plus-fraction digits is an overflow
//! (error 1690 at the caller). Zero is never negative.

use std::cmp::Ordering;
use std::fmt;

const BASE: u64 = 1_000_000_000;

/// Most digits a `DECIMAL` holds.
pub const MAX_PRECISION: usize = 65;
/// Most digits after the point.
pub const MAX_SCALE: u8 = 30;
/// MySQL's `div_precision_increment` default.
pub const DIV_PRECISION_INCREMENT: u8 = 4;

/// An exact decimal number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    neg: bool,
    /// Unscaled magnitude, base 10^9, least significant limb first, no
    /// trailing zero limbs (zero is the empty vector).
    int: Vec<u32>,
    scale: u8,
}

/// A decimal result that needs more than [`MAX_PRECISION`] digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecimalOverflow;

fn trim(v: &mut Vec<u32>) {
    while v.last() == Some(&0) {
        v.pop();
    }
}

fn mag_cmp(a: &[u32], b: &[u32]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for i in (0..a.len()).rev() {
        match a[i].cmp(&b[i]) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    Ordering::Equal
}

fn mag_add(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0u64;
    for i in 0..a.len().max(b.len()) {
        let s = u64::from(*a.get(i).unwrap_or(&0)) + u64::from(*b.get(i).unwrap_or(&0)) + carry;
        out.push((s % BASE) as u32);
        carry = s / BASE;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    trim(&mut out);
    out
}

/// `a - b` for `a >= b`.
fn mag_sub(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut d = i64::from(x) - i64::from(*b.get(i).unwrap_or(&0)) - borrow;
        if d < 0 {
            d += BASE as i64;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

fn mag_mul(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut acc = vec![0u64; a.len() + b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = acc[i + j] + u64::from(x) * u64::from(y) + carry;
            acc[i + j] = t % BASE;
            carry = t / BASE;
        }
        let mut k = i + b.len();
        while carry > 0 {
            let t = acc[k] + carry;
            acc[k] = t % BASE;
            carry = t / BASE;
            k += 1;
        }
    }
    let mut out: Vec<u32> = acc.into_iter().map(|d| d as u32).collect();
    trim(&mut out);
    out
}

fn mag_mul_small(a: &[u32], m: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u64;
    for &x in a {
        let t = u64::from(x) * u64::from(m) + carry;
        out.push((t % BASE) as u32);
        carry = t / BASE;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    trim(&mut out);
    out
}

fn mag_add_small(a: &[u32], s: u32) -> Vec<u32> {
    mag_add(a, &[s])
}

/// Divides by a small number; returns (quotient, remainder).
fn mag_divmod_small(a: &[u32], d: u32) -> (Vec<u32>, u32) {
    let mut out = vec![0u32; a.len()];
    let mut rem = 0u64;
    for i in (0..a.len()).rev() {
        let cur = rem * BASE + u64::from(a[i]);
        out[i] = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    trim(&mut out);
    (out, rem as u32)
}

fn pow10(n: usize) -> Vec<u32> {
    let mut v = vec![1u32];
    for _ in 0..n {
        v = mag_mul_small(&v, 10);
    }
    v
}

fn mag_from_u128(mut v: u128) -> Vec<u32> {
    let mut out = Vec::new();
    while v > 0 {
        out.push((v % u128::from(BASE)) as u32);
        v /= u128::from(BASE);
    }
    out
}

fn mag_to_u128(a: &[u32]) -> Option<u128> {
    let mut v: u128 = 0;
    for &x in a.iter().rev() {
        v = v
            .checked_mul(u128::from(BASE))?
            .checked_add(u128::from(x))?;
    }
    Some(v)
}

fn mag_digits(a: &[u32]) -> String {
    match a.split_last() {
        None => "0".to_string(),
        Some((top, rest)) => {
            let mut s = top.to_string();
            for limb in rest.iter().rev() {
                s.push_str(&format!("{limb:09}"));
            }
            s
        }
    }
}

fn mag_from_digits(digits: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let bytes = digits.as_bytes();
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(9);
        let mut limb = 0u32;
        for &b in &bytes[start..end] {
            limb = limb * 10 + u32::from(b - b'0');
        }
        out.push(limb);
        end = start;
    }
    trim(&mut out);
    out
}

/// Long division: (quotient, remainder) of `a / b`, `b` non-zero.
fn mag_divmod(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    if b.len() == 1 {
        let (q, r) = mag_divmod_small(a, b[0]);
        return (q, if r == 0 { Vec::new() } else { vec![r] });
    }
    if mag_cmp(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    // Digit-by-digit in base 10: at most nine subtractions per digit.
    let digits = mag_digits(a);
    let mut q = String::with_capacity(digits.len());
    let mut rem: Vec<u32> = Vec::new();
    for ch in digits.bytes() {
        rem = mag_add_small(&mag_mul_small(&rem, 10), u32::from(ch - b'0'));
        let mut count = 0u8;
        while mag_cmp(&rem, b) != Ordering::Less {
            rem = mag_sub(&rem, b);
            count += 1;
        }
        q.push((b'0' + count) as char);
    }
    (mag_from_digits(&q), rem)
}

/// How to drop digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Half away from zero (`ROUND`, conversions).
    HalfUp,
    /// Toward zero (`TRUNCATE`, `DIV`).
    Truncate,
    /// Toward negative infinity (`FLOOR`).
    Floor,
    /// Toward positive infinity (`CEIL`).
    Ceil,
}

impl Decimal {
    /// Zero with scale 0.
    pub fn zero() -> Decimal {
        Decimal {
            neg: false,
            int: Vec::new(),
            scale: 0,
        }
    }

    fn make(neg: bool, int: Vec<u32>, scale: u8) -> Decimal {
        let neg = neg && !int.is_empty();
        Decimal { neg, int, scale }
    }

    /// An integer.
    pub fn from_i64(v: i64) -> Decimal {
        Decimal::make(v < 0, mag_from_u128(u128::from(v.unsigned_abs())), 0)
    }

    /// An unsigned integer.
    pub fn from_u64(v: u64) -> Decimal {
        Decimal::make(false, mag_from_u128(u128::from(v)), 0)
    }

    /// `unscaled / 10^scale`.
    pub fn from_i128_scaled(unscaled: i128, scale: u8) -> Decimal {
        Decimal::make(unscaled < 0, mag_from_u128(unscaled.unsigned_abs()), scale)
    }

    /// Parses `[+-]digits[.digits][e[+-]digits]`; `None` if the text is not
    /// a number or needs more than 65 digits / 30 decimals before rounding
    /// is applied (extra decimals are rounded away).
    pub fn parse(text: &str) -> Option<Decimal> {
        let t = text.trim();
        let (neg, body) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exp) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
            None => (body, 0),
        };
        let (ip, fp) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if ip.is_empty() && fp.is_empty() {
            return None;
        }
        if !ip.bytes().all(|b| b.is_ascii_digit()) || !fp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut digits = format!("{ip}{fp}");
        let mut scale = fp.len() as i64 - i64::from(exp);
        if scale < 0 {
            if scale < -(MAX_PRECISION as i64) {
                return None;
            }
            digits.extend(std::iter::repeat_n('0', (-scale) as usize));
            scale = 0;
        }
        let digits = digits.trim_start_matches('0');
        if digits.len() > 200 || scale > 200 {
            return None;
        }
        // The digits carry `scale` decimals.
        let exact = Decimal::make(neg, mag_from_digits(digits), scale as u8);
        let rounded = if exact.scale > MAX_SCALE {
            exact.round(MAX_SCALE as i32, Rounding::HalfUp)
        } else {
            exact
        };
        rounded.check().ok()
    }

    /// Digits after the point.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// True when negative (zero never is).
    pub fn is_negative(&self) -> bool {
        self.neg
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.int.is_empty()
    }

    /// Total significant digits of the unscaled value (at least the scale
    /// plus one, the way MySQL counts precision).
    pub fn precision(&self) -> usize {
        let d = if self.int.is_empty() {
            1
        } else {
            mag_digits(&self.int).len()
        };
        d.max(usize::from(self.scale) + 1)
    }

    /// Digits before the point.
    pub fn integer_digits(&self) -> usize {
        self.precision() - usize::from(self.scale)
    }

    fn check(self) -> Result<Decimal, DecimalOverflow> {
        if self.integer_digits() + usize::from(self.scale) > MAX_PRECISION {
            Err(DecimalOverflow)
        } else {
            Ok(self)
        }
    }

    /// The same value with exactly `scale` decimals (rounding half up when
    /// digits are dropped).
    pub fn with_scale(&self, scale: u8) -> Decimal {
        if scale >= self.scale {
            let m = mag_mul(&self.int, &pow10(usize::from(scale - self.scale)));
            Decimal::make(self.neg, m, scale)
        } else {
            self.round(i32::from(scale), Rounding::HalfUp)
        }
    }

    /// Rounds to `digits` decimals (negative: to tens, hundreds, ...).
    /// The result's scale is `max(digits, 0)`.
    pub fn round(&self, digits: i32, mode: Rounding) -> Decimal {
        let target = digits.clamp(-(MAX_PRECISION as i32), i32::from(MAX_SCALE));
        let drop = i32::from(self.scale) - target;
        if drop <= 0 {
            return self.with_scale(target.max(0) as u8);
        }
        let divisor = pow10(drop as usize);
        let (q, r) = mag_divmod(&self.int, &divisor);
        let up = match mode {
            Rounding::Truncate => false,
            Rounding::HalfUp => {
                let twice = mag_mul_small(&r, 2);
                mag_cmp(&twice, &divisor) != Ordering::Less
            }
            Rounding::Floor => self.neg && !r.is_empty(),
            Rounding::Ceil => !self.neg && !r.is_empty(),
        };
        let q = if up { mag_add_small(&q, 1) } else { q };
        if target >= 0 {
            Decimal::make(self.neg, q, target as u8)
        } else {
            let m = mag_mul(&q, &pow10((-target) as usize));
            Decimal::make(self.neg, m, 0)
        }
    }

    fn aligned(a: &Decimal, b: &Decimal) -> (Vec<u32>, Vec<u32>, u8) {
        let scale = a.scale.max(b.scale);
        (a.with_scale(scale).int, b.with_scale(scale).int, scale)
    }

    fn signed_add(an: bool, a: &[u32], bn: bool, b: &[u32], scale: u8) -> Decimal {
        if an == bn {
            return Decimal::make(an, mag_add(a, b), scale);
        }
        match mag_cmp(a, b) {
            Ordering::Less => Decimal::make(bn, mag_sub(b, a), scale),
            _ => Decimal::make(an, mag_sub(a, b), scale),
        }
    }

    /// `self + other`.
    pub fn add(&self, other: &Decimal) -> Result<Decimal, DecimalOverflow> {
        let (a, b, scale) = Decimal::aligned(self, other);
        Decimal::signed_add(self.neg, &a, other.neg, &b, scale).check()
    }

    /// `self - other`.
    pub fn sub(&self, other: &Decimal) -> Result<Decimal, DecimalOverflow> {
        self.add(&other.negated())
    }

    /// `self * other`.
    pub fn mul(&self, other: &Decimal) -> Result<Decimal, DecimalOverflow> {
        let scale = u16::from(self.scale) + u16::from(other.scale);
        let product = Decimal::make(
            self.neg != other.neg,
            mag_mul(&self.int, &other.int),
            scale.min(255) as u8,
        );
        let product = if scale > u16::from(MAX_SCALE) {
            product.round(i32::from(MAX_SCALE), Rounding::HalfUp)
        } else {
            product
        };
        product.check()
    }

    /// `self / other` with `self.scale + increment` decimals; `None` when
    /// dividing by zero.
    pub fn div(&self, other: &Decimal, increment: u8) -> Option<Result<Decimal, DecimalOverflow>> {
        if other.is_zero() {
            return None;
        }
        let target = (self.scale.saturating_add(increment)).min(MAX_SCALE);
        // q = self.int * 10^(other.scale + target + 1 - self.scale) / other.int,
        // one extra digit for rounding.
        let shift = i32::from(other.scale) + i32::from(target) + 1 - i32::from(self.scale);
        let (num, den) = if shift >= 0 {
            (
                mag_mul(&self.int, &pow10(shift as usize)),
                other.int.clone(),
            )
        } else {
            (
                self.int.clone(),
                mag_mul(&other.int, &pow10((-shift) as usize)),
            )
        };
        let (q, _) = mag_divmod(&num, &den);
        let extra = Decimal::make(self.neg != other.neg, q, target + 1);
        Some(extra.round(i32::from(target), Rounding::HalfUp).check())
    }

    /// Integer division toward zero (`DIV`) as a decimal with scale 0.
    pub fn div_trunc(&self, other: &Decimal) -> Option<Decimal> {
        if other.is_zero() {
            return None;
        }
        let (a, b, _) = Decimal::aligned(self, other);
        let (q, _) = mag_divmod(&a, &b);
        Some(Decimal::make(self.neg != other.neg, q, 0))
    }

    /// Remainder with the sign of the dividend (`MOD`, `%`).
    pub fn rem(&self, other: &Decimal) -> Option<Decimal> {
        if other.is_zero() {
            return None;
        }
        let (a, b, scale) = Decimal::aligned(self, other);
        let (_, r) = mag_divmod(&a, &b);
        Some(Decimal::make(self.neg, r, scale))
    }

    /// `-self`.
    pub fn negated(&self) -> Decimal {
        Decimal::make(!self.neg, self.int.clone(), self.scale)
    }

    /// `|self|`.
    pub fn abs(&self) -> Decimal {
        Decimal::make(false, self.int.clone(), self.scale)
    }

    /// The value rounded half up to an integer, if it fits `i64`.
    pub fn to_i64(&self) -> Option<i64> {
        let r = self.round(0, Rounding::HalfUp);
        let m = mag_to_u128(&r.int)?;
        if r.neg {
            if m <= u128::from(i64::MAX as u64) + 1 {
                Some((m as i128).wrapping_neg() as i64)
            } else {
                None
            }
        } else {
            i64::try_from(m).ok()
        }
    }

    /// The value rounded half up to an unsigned integer, if it fits `u64`
    /// and is not negative.
    pub fn to_u64(&self) -> Option<u64> {
        let r = self.round(0, Rounding::HalfUp);
        if r.neg {
            return None;
        }
        u64::try_from(mag_to_u128(&r.int)?).ok()
    }

    /// The nearest double.
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// The exact value of a finite double, rounded to 30 decimals; `None`
    /// for NaN, infinities and values beyond 65 digits.
    pub fn from_f64(v: f64) -> Option<Decimal> {
        if !v.is_finite() {
            return None;
        }
        // Shortest round-trip representation, as MySQL converts doubles.
        Decimal::parse(&format!("{v:e}")).map(|d| d.normalized())
    }

    /// The same value without trailing fractional zeros.
    pub fn normalized(&self) -> Decimal {
        let mut d = self.clone();
        while d.scale > 0 {
            let (q, r) = mag_divmod_small(&d.int, 10);
            if r != 0 {
                break;
            }
            d.int = q;
            d.scale -= 1;
        }
        d
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {}
        }
        let (a, b, _) = Decimal::aligned(self, other);
        let c = mag_cmp(&a, &b);
        if self.neg {
            c.reverse()
        } else {
            c
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = mag_digits(&self.int);
        let scale = usize::from(self.scale);
        let padded = if digits.len() <= scale {
            format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
        } else {
            digits
        };
        let (ip, fp) = padded.split_at(padded.len() - scale);
        if self.neg {
            f.write_str("-")?;
        }
        f.write_str(ip)?;
        if scale > 0 {
            write!(f, ".{fp}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap_or_else(|| panic!("parse {s}"))
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "0",
            "1",
            "-1",
            "12.50",
            "-0.001",
            "123456789012345678901234567890.123",
            "99999999999999999999999999999999999",
            "0.000000000000000000000000000001",
        ] {
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(d("-0.00").to_string(), "0.00");
        assert_eq!(d("1.5e3").to_string(), "1500");
        assert_eq!(d("15e-1").to_string(), "1.5");
        assert_eq!(d("+.5").to_string(), "0.5");
        assert!(Decimal::parse("1.2.3").is_none());
        assert!(Decimal::parse("").is_none());
        assert!(Decimal::parse("abc").is_none());
        assert!(Decimal::parse(&"9".repeat(66)).is_none());
        assert!(Decimal::parse(&"9".repeat(65)).is_some());
    }

    #[test]
    fn arithmetic_matches_mysql() {
        assert_eq!(d("1.10").add(&d("2.205")).unwrap().to_string(), "3.305");
        assert_eq!(d("1").sub(&d("2.5")).unwrap().to_string(), "-1.5");
        assert_eq!(d("1.5").mul(&d("-2.25")).unwrap().to_string(), "-3.375");
        assert_eq!(
            d("1").div(&d("3"), 4).unwrap().unwrap().to_string(),
            "0.3333"
        );
        assert_eq!(
            d("2").div(&d("3"), 4).unwrap().unwrap().to_string(),
            "0.6667"
        );
        assert_eq!(
            d("10.5").div(&d("2"), 4).unwrap().unwrap().to_string(),
            "5.25000"
        );
        assert!(d("1").div(&d("0"), 4).is_none());
        assert_eq!(d("7").div_trunc(&d("-2")).unwrap().to_string(), "-3");
        assert_eq!(d("-7.5").rem(&d("2")).unwrap().to_string(), "-1.5");
        let big = d(&"9".repeat(65));
        assert!(big.add(&d("1")).is_err());
    }

    #[test]
    fn big_division_is_exact() {
        let a = d("123456789012345678901234567890123456789");
        let b = d("987654321098765432109876543");
        let q = a.div(&b, 4).unwrap().unwrap();
        assert_eq!(q.to_string(), "124999998860.9375");
        // Check q * b is within b/10^4 of a.
        let back = q.mul(&b).unwrap();
        let diff = back.sub(&a).unwrap().abs();
        assert!(diff < b.div(&d("10000"), 0).unwrap().unwrap());
    }

    #[test]
    fn rounding_modes() {
        assert_eq!(d("2.5").round(0, Rounding::HalfUp).to_string(), "3");
        assert_eq!(d("-2.5").round(0, Rounding::HalfUp).to_string(), "-3");
        assert_eq!(d("2.45").round(1, Rounding::HalfUp).to_string(), "2.5");
        assert_eq!(d("1234.5").round(-2, Rounding::HalfUp).to_string(), "1200");
        assert_eq!(d("-2.1").round(0, Rounding::Floor).to_string(), "-3");
        assert_eq!(d("2.1").round(0, Rounding::Ceil).to_string(), "3");
        assert_eq!(d("2.9").round(0, Rounding::Truncate).to_string(), "2");
        assert_eq!(d("2").with_scale(3).to_string(), "2.000");
    }

    #[test]
    fn conversions() {
        assert_eq!(d("9223372036854775807").to_i64(), Some(i64::MAX));
        assert_eq!(d("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(d("9223372036854775808").to_i64(), None);
        assert_eq!(d("18446744073709551615").to_u64(), Some(u64::MAX));
        assert_eq!(d("-1").to_u64(), None);
        assert_eq!(d("2.5").to_i64(), Some(3));
        assert_eq!(Decimal::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(Decimal::from_f64(-1.25e-3).unwrap().to_string(), "-0.00125");
        assert_eq!(d("1.25").to_f64(), 1.25);
        assert!(d("1.5") > d("1.49"));
        assert!(d("-1.5") < d("-1.49"));
        assert_eq!(d("1.50").cmp(&d("1.5")), Ordering::Equal);
    }

    #[test]
    fn random_arithmetic_matches_i128() {
        let seed = basalt_common::test_support::test_seed_or(
            "random_arithmetic_matches_i128",
            0x5eed_dec1,
        );
        let mut state = seed;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2000 {
            let a = (next() as i64 >> (next() % 40)) as i128;
            let b = (next() as i64 >> (next() % 40)) as i128;
            let (da, db) = (
                Decimal::from_i128_scaled(a, 2),
                Decimal::from_i128_scaled(b, 3),
            );
            let sum = da.add(&db).unwrap();
            assert_eq!(sum, Decimal::from_i128_scaled(a * 10 + b, 3), "seed {seed}");
            let prod = da.mul(&db).unwrap();
            assert_eq!(prod, Decimal::from_i128_scaled(a * b, 5), "seed {seed}");
            if b != 0 {
                let q = Decimal::from_i128_scaled(a, 0).div_trunc(&Decimal::from_i128_scaled(b, 0));
                assert_eq!(
                    q.unwrap(),
                    Decimal::from_i128_scaled(a / b, 0),
                    "seed {seed}"
                );
            }
        }
    }
}
