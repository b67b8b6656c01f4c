//! `COM_STMT_EXECUTE` payload decoding.
//!
//! ```text
//!   int<4> statement id | int<1> flags (cursor type) | int<4> iteration count (1)
//!   if params > 0:
//!     NULL bitmap, (params + 7) / 8 bytes, bit i = parameter i is NULL
//!     int<1> new-params-bound flag
//!     if 1: params x (int<1> type, int<1> flags: 0x80 = unsigned)
//!     values of the non-NULL parameters without long data, in order
//! ```
//!
//! With new-params-bound = 0 the types bound by the previous execution are
//! reused; a first execution without types is malformed (error 1210).

use crate::error::ProtocolError;
use crate::packet::Decoder;
use crate::value::{decode_binary_param, Value};

/// `CURSOR_TYPE_READ_ONLY` bit of the execute flags.
pub const CURSOR_TYPE_READ_ONLY: u8 = 0x01;

/// How one parameter arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamSlot {
    /// Decoded from the execute packet.
    Value(Value),
    /// Supplied earlier by `COM_STMT_SEND_LONG_DATA`.
    LongData,
}

/// A decoded `COM_STMT_EXECUTE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecuteRequest {
    /// Statement id.
    pub stmt_id: u32,
    /// Cursor flags.
    pub flags: u8,
    /// Parameters, one per placeholder.
    pub params: Vec<ParamSlot>,
}

/// Reads only the statement id, so the caller can look the statement up.
pub fn execute_stmt_id(body: &[u8]) -> Result<u32, ProtocolError> {
    Decoder::new(body).u32("statement id")
}

/// Decodes an execute body (after the command byte) for a statement with
/// `param_count` placeholders. `bound_types` holds the `(type, flags)` pairs
/// of the previous execution and is updated when the packet rebinds them;
/// `has_long_data[i]` says parameter `i` was sent with SEND_LONG_DATA.
pub fn parse_execute(
    body: &[u8],
    param_count: usize,
    bound_types: &mut Option<Vec<(u8, u8)>>,
    has_long_data: &[bool],
) -> Result<ExecuteRequest, ProtocolError> {
    let mut d = Decoder::new(body);
    let stmt_id = d.u32("statement id")?;
    let flags = d.u8("execute flags")?;
    let _iterations = d.u32("iteration count")?;
    let mut params = Vec::with_capacity(param_count.min(d.remaining() + 1));
    if param_count == 0 {
        return Ok(ExecuteRequest {
            stmt_id,
            flags,
            params,
        });
    }
    let null_bitmap = d.take(param_count.div_ceil(8), "NULL bitmap")?;
    let new_bound = d.u8("new-params-bound flag")?;
    match new_bound {
        0 => {}
        1 => {
            let raw = d.take(param_count * 2, "parameter types")?;
            let types = raw.chunks_exact(2).map(|c| (c[0], c[1])).collect();
            *bound_types = Some(types);
        }
        _ => {
            return Err(ProtocolError::Malformed {
                what: "new-params-bound flag",
            })
        }
    }
    let types = bound_types.as_ref().ok_or(ProtocolError::Malformed {
        what: "parameter types never bound",
    })?;
    if types.len() != param_count {
        return Err(ProtocolError::Malformed {
            what: "parameter type count",
        });
    }
    for (i, &(ty, tflags)) in types.iter().enumerate() {
        let is_null = null_bitmap[i / 8] & (1 << (i % 8)) != 0;
        let slot = if has_long_data.get(i).copied().unwrap_or(false) {
            ParamSlot::LongData
        } else if is_null {
            ParamSlot::Value(Value::Null)
        } else {
            ParamSlot::Value(decode_binary_param(ty, tflags & 0x80 != 0, &mut d)?)
        };
        params.push(slot);
    }
    Ok(ExecuteRequest {
        stmt_id,
        flags,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(params: &[(u8, u8, &[u8])], nulls: u8, bound: bool) -> Vec<u8> {
        let mut b = vec![9, 0, 0, 0, 0, 1, 0, 0, 0];
        if !params.is_empty() {
            b.push(nulls);
            b.push(u8::from(bound));
            if bound {
                for (t, f, _) in params {
                    b.extend_from_slice(&[*t, *f]);
                }
            }
            for (_, _, v) in params {
                b.extend_from_slice(v);
            }
        }
        b
    }

    #[test]
    fn decodes_bound_types_and_reuses_them() {
        let p: [(u8, u8, &[u8]); 3] = [
            (8, 0, &(-5i64).to_le_bytes()),
            (253, 0, b"\x03abc"),
            (1, 0x80, &[200]),
        ];
        let mut bound = None;
        let r = parse_execute(&body(&p, 0, true), 3, &mut bound, &[]).unwrap();
        assert_eq!(r.stmt_id, 9);
        assert_eq!(
            r.params,
            vec![
                ParamSlot::Value(Value::Int(-5)),
                ParamSlot::Value(Value::Bytes(b"abc".to_vec())),
                ParamSlot::Value(Value::UInt(200)),
            ]
        );
        // Second execution: no types, second parameter NULL (bit 1).
        let p2: [(u8, u8, &[u8]); 3] =
            [(8, 0, &7i64.to_le_bytes()), (253, 0, b""), (1, 0x80, &[1])];
        let r = parse_execute(&body(&p2, 0b010, false), 3, &mut bound, &[]).unwrap();
        assert_eq!(
            r.params,
            vec![
                ParamSlot::Value(Value::Int(7)),
                ParamSlot::Value(Value::Null),
                ParamSlot::Value(Value::UInt(1)),
            ]
        );
    }

    #[test]
    fn lying_lengths_and_missing_types_are_errors() {
        let mut bound = None;
        // Types never bound.
        assert!(parse_execute(&body(&[(8, 0, &[0; 8])], 0, false), 1, &mut bound, &[]).is_err());
        // A string announcing 200 bytes with 3 present.
        let p: [(u8, u8, &[u8]); 1] = [(253, 0, b"\xc8abc")];
        assert!(parse_execute(&body(&p, 0, true), 1, &mut bound, &[]).is_err());
        // A LONGLONG with 3 bytes.
        let p: [(u8, u8, &[u8]); 1] = [(8, 0, b"abc")];
        assert!(parse_execute(&body(&p, 0, true), 1, &mut bound, &[]).is_err());
        // Unknown type code.
        let p: [(u8, u8, &[u8]); 1] = [(100, 0, b"")];
        assert!(parse_execute(&body(&p, 0, true), 1, &mut bound, &[]).is_err());
        // Bad datetime length.
        let p: [(u8, u8, &[u8]); 1] = [(12, 0, b"\x05abcde")];
        assert!(parse_execute(&body(&p, 0, true), 1, &mut bound, &[]).is_err());
    }

    #[test]
    fn long_data_parameters_are_not_read_from_the_packet() {
        let p: [(u8, u8, &[u8]); 2] = [(252, 0, b""), (3, 0, &7i32.to_le_bytes())];
        let mut bound = None;
        let r = parse_execute(&body(&p, 0, true), 2, &mut bound, &[true, false]).unwrap();
        assert_eq!(
            r.params,
            vec![ParamSlot::LongData, ParamSlot::Value(Value::Int(7))]
        );
    }
}
