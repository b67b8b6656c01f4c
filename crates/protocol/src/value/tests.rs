use super::*;
use crate::packet::Decoder;

fn text(v: &Value, col: &ColumnDef) -> Option<String> {
    let mut out = Vec::new();
    v.encode_text(col, &mut out).unwrap();
    let mut d = Decoder::new(&out);
    let cell = d.lenenc_bytes_or_null();
    assert!(d.is_empty(), "trailing bytes after one cell");
    cell.map(|b| String::from_utf8(b.to_vec()).unwrap())
}

trait NullCell<'a> {
    fn lenenc_bytes_or_null(&mut self) -> Option<&'a [u8]>;
}

impl<'a> NullCell<'a> for Decoder<'a> {
    fn lenenc_bytes_or_null(&mut self) -> Option<&'a [u8]> {
        if self.peek_u8() == Some(0xFB) {
            self.u8("null").unwrap();
            None
        } else {
            Some(self.lenenc_bytes("cell").unwrap())
        }
    }
}

fn col(t: ColumnType) -> ColumnDef {
    ColumnDef::new("c", t)
}

#[test]
fn text_encoding_follows_the_declared_column() {
    assert_eq!(text(&Value::Null, &col(ColumnType::Long)), None);
    assert_eq!(
        text(&Value::Int(-42), &col(ColumnType::Long)).unwrap(),
        "-42"
    );
    assert_eq!(
        text(
            &Value::UInt(u64::MAX),
            &col(ColumnType::LongLong).with_flags(ColumnFlags::UNSIGNED)
        )
        .unwrap(),
        "18446744073709551615"
    );
    let zf = col(ColumnType::Long)
        .with_flags(ColumnFlags::ZEROFILL | ColumnFlags::UNSIGNED)
        .with_length(5);
    assert_eq!(text(&Value::UInt(42), &zf).unwrap(), "00042");
    assert_eq!(
        text(&Value::UInt(5), &col(ColumnType::Year)).unwrap(),
        "0005"
    );
    assert_eq!(
        text(&Value::Double(1.5), &col(ColumnType::Double)).unwrap(),
        "1.5"
    );
    assert_eq!(
        text(&Value::Double(1e20), &col(ColumnType::Double)).unwrap(),
        "1e20"
    );
    assert_eq!(
        text(&Value::Double(0.00001), &col(ColumnType::Double)).unwrap(),
        "1e-5"
    );
    assert_eq!(
        text(&Value::Double(-123456.0), &col(ColumnType::Double)).unwrap(),
        "-123456"
    );
    assert_eq!(
        text(&Value::Float(0.1), &col(ColumnType::Float)).unwrap(),
        "0.1"
    );
    assert_eq!(
        text(
            &Value::Double(2.0),
            &col(ColumnType::Double).with_decimals(3)
        )
        .unwrap(),
        "2.000"
    );
    assert_eq!(
        text(
            &Value::Decimal("-12.50".into()),
            &col(ColumnType::NewDecimal)
        )
        .unwrap(),
        "-12.50"
    );
    let date = Date {
        year: 2024,
        month: 2,
        day: 29,
    };
    assert_eq!(
        text(&Value::Date(date), &col(ColumnType::Date)).unwrap(),
        "2024-02-29"
    );
    let dt = DateTime {
        date,
        hour: 13,
        minute: 5,
        second: 9,
        micros: 120_000,
    };
    assert_eq!(
        text(&Value::DateTime(dt), &col(ColumnType::DateTime)).unwrap(),
        "2024-02-29 13:05:09"
    );
    assert_eq!(
        text(
            &Value::DateTime(dt),
            &col(ColumnType::DateTime).with_decimals(3)
        )
        .unwrap(),
        "2024-02-29 13:05:09.120"
    );
    let t = Time {
        negative: true,
        days: 1,
        hours: 2,
        minutes: 3,
        seconds: 4,
        micros: 5,
    };
    assert_eq!(
        text(&Value::Time(t), &col(ColumnType::Time).with_decimals(6)).unwrap(),
        "-26:03:04.000005"
    );
    // Long strings get a multi-byte length prefix.
    let long = "x".repeat(300);
    assert_eq!(
        text(&Value::from(long.as_str()), &col(ColumnType::VarString)).unwrap(),
        long
    );
}

#[test]
fn values_that_do_not_fit_their_column_are_refused() {
    let mut out = Vec::new();
    assert!(Value::Int(300)
        .encode_binary(&col(ColumnType::Tiny), &mut out)
        .is_err());
    assert!(Value::Int(-1)
        .encode_binary(
            &col(ColumnType::Long).with_flags(ColumnFlags::UNSIGNED),
            &mut out
        )
        .is_err());
    assert!(Value::from("abc")
        .encode_text(&col(ColumnType::Long), &mut out)
        .is_err());
    assert!(Value::Time(Time::default())
        .encode_binary(&col(ColumnType::Date), &mut out)
        .is_err());
    assert!(Value::Int(255)
        .encode_binary(
            &col(ColumnType::Tiny).with_flags(ColumnFlags::UNSIGNED),
            &mut out
        )
        .is_ok());
}

/// Every binary encoding decodes back through the parameter decoder to the
/// same value (the two directions share the wire format).
#[test]
fn binary_encoding_round_trips_through_the_parameter_decoder() {
    let date = Date {
        year: 1999,
        month: 12,
        day: 31,
    };
    let cases: Vec<(ColumnDef, Value)> = vec![
        (col(ColumnType::Tiny), Value::Int(-128)),
        (
            col(ColumnType::Tiny).with_flags(ColumnFlags::UNSIGNED),
            Value::UInt(255),
        ),
        (col(ColumnType::Short), Value::Int(-32768)),
        (
            col(ColumnType::Short).with_flags(ColumnFlags::UNSIGNED),
            Value::UInt(65535),
        ),
        (col(ColumnType::Int24), Value::Int(-8_388_608)),
        (col(ColumnType::Long), Value::Int(i64::from(i32::MIN))),
        (
            col(ColumnType::Long).with_flags(ColumnFlags::UNSIGNED),
            Value::UInt(u64::from(u32::MAX)),
        ),
        (col(ColumnType::LongLong), Value::Int(i64::MIN)),
        (
            col(ColumnType::LongLong).with_flags(ColumnFlags::UNSIGNED),
            Value::UInt(u64::MAX),
        ),
        (col(ColumnType::Year), Value::UInt(2155)),
        (col(ColumnType::Float), Value::Float(-1.25)),
        (col(ColumnType::Double), Value::Double(std::f64::consts::PI)),
        (
            col(ColumnType::NewDecimal),
            Value::Decimal("12345678901234567890.123".into()),
        ),
        (col(ColumnType::VarString), Value::from("héllo")),
        (col(ColumnType::Blob), Value::Bytes(vec![0, 255, 1])),
        (col(ColumnType::Json), Value::from("{\"a\":1}")),
        (col(ColumnType::Bit), Value::Bytes(vec![0b101])),
        (col(ColumnType::Date), Value::Date(date)),
        (col(ColumnType::Date), Value::Date(Date::default())),
        (
            col(ColumnType::DateTime),
            Value::DateTime(DateTime {
                date,
                ..DateTime::default()
            }),
        ),
        (
            col(ColumnType::DateTime),
            Value::DateTime(DateTime {
                date,
                hour: 23,
                minute: 59,
                second: 58,
                micros: 0,
            }),
        ),
        (
            col(ColumnType::Timestamp),
            Value::DateTime(DateTime {
                date,
                hour: 1,
                minute: 2,
                second: 3,
                micros: 999_999,
            }),
        ),
        (col(ColumnType::Time), Value::Time(Time::default())),
        (
            col(ColumnType::Time),
            Value::Time(Time {
                negative: true,
                days: 34,
                hours: 22,
                minutes: 59,
                seconds: 59,
                micros: 0,
            }),
        ),
        (
            col(ColumnType::Time),
            Value::Time(Time {
                negative: false,
                days: 0,
                hours: 1,
                minutes: 0,
                seconds: 0,
                micros: 7,
            }),
        ),
    ];
    for (c, v) in cases {
        let mut out = Vec::new();
        v.encode_binary(&c, &mut out).unwrap();
        let mut d = Decoder::new(&out);
        let back = decode_binary_param(c.column_type as u8, c.is_unsigned(), &mut d)
            .unwrap_or_else(|e| panic!("{c:?} {v:?}: {e}"));
        assert!(d.is_empty(), "{v:?} left bytes");
        let expected = match (&v, c.column_type) {
            // YEAR is unsigned on the wire; DECIMAL text comes back as Decimal.
            (Value::Int(i), _) if c.is_unsigned() => Value::UInt(*i as u64),
            _ => v.clone(),
        };
        assert_eq!(back, expected, "column {:?}", c.column_type);
    }
}
