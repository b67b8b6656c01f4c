//! Comparing encoded records with search keys, without decoding them fully.

use std::cmp::Ordering;

use super::decode::{cmp_field, null_bit_set, parse_header, read_len_entry};
use super::info::{INFO_MIN_REC, REC_HEADER_LEN};
use super::layout::{PhysLen, RecordLayout};
use crate::error::{PageError, Result};

impl RecordLayout {
    /// Orders the encoded record `rec` against a search key: `key` holds
    /// values for a prefix of the key fields (`None` = NULL) and a record
    /// compares `Equal` when its first `key.len()` key fields equal the key
    /// field by field. NULL sorts before every value; the min-record sorts
    /// before everything. Returns the order of the *record* relative to the
    /// key.
    ///
    /// Range scans over a prefix use this with
    /// [`SearchMode`](crate::index_page::SearchMode): the records matching a
    /// prefix are the slots from the `GreaterOrEqual` position up to (not
    /// including) the `Greater` position.
    ///
    /// Bounds-checks every byte it reads: a damaged record yields
    /// [`PageError::BadRecord`], never a panic.
    // PERF: hot path of every B+tree descent: no allocation; the length
    // array is walked once to find the data and again only as far as the
    // compared key fields.
    pub fn compare_key(&self, rec: &[u8], key: &[Option<&[u8]>]) -> Result<Ordering> {
        if key.len() > self.n_key() {
            return Err(PageError::BadValue(format!(
                "search key has {} fields, the index key {}",
                key.len(),
                self.n_key()
            )));
        }
        let (info, phys) = parse_header(self, rec)?;
        if info & INFO_MIN_REC != 0 {
            return Ok(Ordering::Less);
        }
        let lens_start = REC_HEADER_LEN + phys.null_bytes;
        // Pass 1: find where the field data starts.
        let mut cur = lens_start;
        for f in &phys.fields {
            if let PhysLen::Var { long, .. } = f.len {
                if !f.null_bit.is_some_and(|b| null_bit_set(rec, b)) {
                    read_len_entry(rec, &mut cur, long)?;
                }
            }
        }
        // Pass 2: walk the key fields, comparing as we go.
        let mut pos = cur;
        let mut cur = lens_start;
        for (f, k) in phys.fields.iter().zip(key) {
            let value = if f.null_bit.is_some_and(|b| null_bit_set(rec, b)) {
                None
            } else {
                let flen = match f.len {
                    PhysLen::Fixed(n) => n,
                    PhysLen::Var { long, .. } => {
                        let (flen, ext) = read_len_entry(rec, &mut cur, long)?;
                        if ext {
                            return Err(PageError::BadRecord("externally stored key field".into()));
                        }
                        flen
                    }
                };
                let Some(v) = rec.get(pos..pos + flen) else {
                    return Err(PageError::BadRecord(
                        "key field runs past the record".into(),
                    ));
                };
                pos += flen;
                Some(v)
            };
            let ord = cmp_field(f.coll, value, *k);
            if ord != Ordering::Equal {
                return Ok(ord);
            }
        }
        Ok(Ordering::Equal)
    }
}
