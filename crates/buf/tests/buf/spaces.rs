//! The tablespace registry.

use std::sync::Arc;

use basalt_buf::{BufError, Spaces, SpacesConfig, EXTENT_PAGES};
use basalt_common::{SpaceId, PAGE_SIZE};
use basalt_io::{Io, MemIo, OpenOptions};

use crate::common::space_path;

#[test]
fn create_open_extend_remove() {
    let mem = Arc::new(MemIo::new());
    let spaces = Spaces::new(
        mem.clone(),
        SpacesConfig {
            direct: true,
            ..SpacesConfig::default()
        },
    );
    let id = SpaceId(5);
    let path = space_path(id);
    let s = spaces.create(id, &path, 0x21, 3).expect("create");
    assert_eq!((s.id(), s.size(), s.flags()), (id, 3, 0x21));
    assert!(
        s.file().is_direct(),
        "data files are opened with O_DIRECT when configured"
    );
    assert_eq!(
        mem.durable_bytes(&path).expect("file").len(),
        3 * PAGE_SIZE,
        "size made durable"
    );
    assert!(mem.dir_syncs() >= 1, "the new directory entry is synced");

    assert!(matches!(
        spaces.create(id, &path, 0, 1),
        Err(BufError::SpaceExists(_))
    ));
    assert!(matches!(
        spaces.create(SpaceId(6), &path, 0, 1),
        Err(BufError::SpaceFileExists(p)) if p == path
    ));

    // Extension rounds up to whole extents and never shrinks.
    assert_eq!(spaces.extend(id, 4).expect("extend"), EXTENT_PAGES);
    assert_eq!(spaces.extend(id, 10).expect("no-op"), EXTENT_PAGES);
    assert_eq!(s.size(), EXTENT_PAGES);
    assert_eq!(
        s.file().len().expect("len"),
        u64::from(EXTENT_PAGES) * PAGE_SIZE as u64
    );

    // Re-open after closing: size comes from the file.
    spaces.close(id).expect("close");
    assert!(matches!(spaces.get(id), Err(BufError::NoSuchSpace(_))));
    let s = spaces.open(id, &path, 0x21).expect("open");
    assert_eq!(s.size(), EXTENT_PAGES);
    assert_eq!(spaces.ids(), vec![id]);

    spaces.remove(id).expect("remove");
    assert!(!mem.exists(&path));
    assert!(matches!(spaces.remove(id), Err(BufError::NoSuchSpace(_))));
}

#[test]
fn files_that_are_not_whole_pages_are_rejected() {
    let mem = Arc::new(MemIo::new());
    let path = space_path(SpaceId(7));
    let f = mem
        .open(
            &path,
            OpenOptions {
                create: true,
                direct: false,
            },
        )
        .expect("open");
    f.set_len(PAGE_SIZE as u64 + 512).expect("set_len");
    let spaces = Spaces::new(mem.clone(), SpacesConfig::default());
    match spaces.open(SpaceId(7), &path, 0) {
        Err(BufError::BadSpaceFile { len, .. }) => assert_eq!(len, PAGE_SIZE as u64 + 512),
        other => panic!("expected BadSpaceFile, got {other:?}"),
    }
    assert!(matches!(
        spaces.open(SpaceId(8), &space_path(SpaceId(8)), 0),
        Err(BufError::Io(_))
    ));
}
