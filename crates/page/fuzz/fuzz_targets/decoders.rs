//! Fuzz target: every decoder of the page crate on arbitrary bytes.
//!
//! The input is read three ways: as a redo stream (decoded and applied to a
//! page image made from the same bytes), as a page image (checked, searched
//! and iterated), and as a record under a few fixed layouts. Nothing may
//! panic; failed page operations must leave the page unchanged.

#![no_main]

use basalt_common::{PageId, SpaceId, PAGE_SIZE};
use basalt_page::index_page::{self, IndexPage, SearchMode};
use basalt_page::rec::{FieldCmp, FieldDef, RecordLayout, RecordRef};
use basalt_page::redo::RedoReader;
use basalt_page::overflow;

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));

fn layouts() -> Vec<RecordLayout> {
    vec![
        RecordLayout::new(vec![FieldDef::fixed(4), FieldDef::var(100).nullable()], 1, true),
        RecordLayout::new(
            vec![
                FieldDef::var(300).with_cmp(FieldCmp::Collated(45)).nullable(),
                FieldDef::fixed(8),
                FieldDef::var(100_000).nullable(),
            ],
            2,
            false,
        ),
    ]
    .into_iter()
    .map(|l| l.expect("fixed layouts are valid"))
    .collect()
}

fn run(data: &[u8]) {
    let id = PageId::new(SpaceId(1), 2);
    let mut page = vec![0u8; PAGE_SIZE];
    let n = data.len().min(PAGE_SIZE);
    page[..n].copy_from_slice(&data[..n]);

    for d in RedoReader::new(data) {
        let Ok(d) = d else { break };
        let target = d.page_id.unwrap_or(id);
        let before = page.clone();
        if d.record.apply(target, &mut page).is_err() {
            assert_eq!(page, before, "failed apply changed the page");
        }
    }

    let layouts = layouts();
    let checked = index_page::check(&page).is_ok();
    if let Ok(v) = IndexPage::new(&page) {
        for (i, r) in v.iter().enumerate() {
            match r {
                Ok(bytes) => {
                    for layout in &layouts {
                        if let Ok(rec) = RecordRef::new(layout, bytes) {
                            for f in 0..rec.n_fields() {
                                let _ = (rec.field(f), rec.extern_ref(f));
                            }
                        }
                        let _ = layout.compare_key(bytes, &[Some(b"key")]);
                    }
                }
                Err(e) => assert!(!checked, "checked page fails on slot {i}: {e}"),
            }
        }
        for layout in &layouts {
            let _ = v.search(layout, &[Some(b"k")], SearchMode::GreaterOrEqual);
            let _ = v.child_for(layout, &[], SearchMode::Greater);
        }
    }
    let _ = overflow::read_chunk(&page);

    for layout in &layouts {
        if let Ok(rec) = RecordRef::new(layout, data) {
            for f in 0..rec.n_fields() {
                let _ = (rec.field(f), rec.is_external(f), rec.extern_ref(f));
            }
            let key: Vec<Option<&[u8]>> =
                (0..layout.n_key().min(rec.n_fields())).map(|f| rec.field(f)).collect();
            assert_eq!(layout.compare_key(data, &key).ok(), Some(rec.compare_key(&key)));
        }
    }
}
