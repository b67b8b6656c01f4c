//! `Catalog`: opening (and bootstrapping) the dictionary, reading every
//! row, applying batches of changes, allocating ids.

use std::sync::OnceLock;

use basalt_btree::TreeStats;
use basalt_buf::LatchMode;
use basalt_common::layout::DICT_HEADER_PAGE;
use basalt_common::{PageId, SpaceId};
use basalt_mtr::{Mtr, PageRef, PageStore};
use basalt_page::{PageType, RedoRecord};
use parking_lot::RwLock;
use tracing::{error, info, warn};

use crate::change::{AllocatedIds, ApplyReport, CatalogChange, CatalogSnapshot, IdRequest};
use crate::codec::SystemTableDef;
use crate::error::{CatalogError, CatalogResult};
use crate::header::{
    Counters, DictHeader, HeaderState, RootSlot, MAX_SPACE_ID, MAX_SYSTEM_TABLES, OFF_COUNTERS,
};
use crate::table::{PutOutcome, SystemKey, SystemRow, SystemTable};
use crate::tables::{DB, SCHEMATA, SYSTEM_TABLES, TABLES_PRIV, USER};

/// Page id of the dictionary header.
pub fn dict_header_page() -> PageId {
    PageId::new(SpaceId::SYSTEM, DICT_HEADER_PAGE)
}

/// How [`Catalog::open_or_bootstrap`] found the data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CatalogStartup {
    /// No dictionary existed: the header and every system table were
    /// created.
    Bootstrapped,
    /// The dictionary was complete.
    Opened,
    /// The dictionary lacked system tables this build defines; they were
    /// created.
    Upgraded {
        /// Names of the tables created.
        created: Vec<&'static str>,
    },
}

/// The data dictionary: the system tables and the dictionary header. See
/// the crate documentation for the on-disk layout and the locking rules.
#[derive(Debug)]
pub struct Catalog {
    /// One per entry of `SYSTEM_TABLES`, same order.
    tables: Vec<SystemTable>,
    /// Writers (`apply`) exclusive, readers shared: keeps every
    /// multi-operation mini-transaction on the system trees alone with
    /// them (see the crate doc, "Why one writer").
    latch: RwLock<()>,
    /// Set when a committed batch could not be made durable.
    poison: OnceLock<String>,
    startup: CatalogStartup,
}

impl Catalog {
    /// Opens the dictionary of the data directory `store` serves, creating
    /// it when page 7 of the system tablespace was never written (a new
    /// data directory), and creating any system table this build defines
    /// that the header does not name yet. Call once, after
    /// `Storage::open`/`Storage::create`, before any other thread uses
    /// the system tables.
    ///
    /// Bootstrap is a single durable mini-transaction (header page, every
    /// root page, the tablespace header's allocation state): after a crash
    /// the dictionary is either complete or absent, never half made.
    pub fn open_or_bootstrap(store: &PageStore) -> CatalogResult<Catalog> {
        let mut mtr = Mtr::start(store).map_err(CatalogError::from_mtr)?;
        let hdr = mtr
            .get_allow_zeroed(dict_header_page(), LatchMode::Exclusive)
            .map_err(CatalogError::from_mtr)?;
        let (mut header, fresh) = match DictHeader::read(mtr.page(hdr))? {
            HeaderState::Absent => (
                DictHeader {
                    counters: Counters::INITIAL,
                    slots: Vec::new(),
                },
                true,
            ),
            HeaderState::Present(h) => (h, false),
        };
        for slot in &header.slots {
            if !SYSTEM_TABLES.iter().any(|d| d.id == slot.table) {
                warn!(
                    table_id = slot.table.0,
                    "dictionary header names a system table this build does not know; ignored"
                );
            }
        }
        let mut tables = Vec::with_capacity(SYSTEM_TABLES.len());
        let mut created = Vec::new();
        for &def in SYSTEM_TABLES.iter() {
            let table = match header.slot(def.id) {
                Some(slot) => open_slot(def, slot)?,
                None => {
                    if header.slots.len() >= MAX_SYSTEM_TABLES {
                        return Err(CatalogError::corrupt(
                            "dictionary header",
                            format!("no room for a root slot of {}", def.name),
                        ));
                    }
                    let t = SystemTable::create(&mut mtr, def)?;
                    header.slots.push(RootSlot {
                        table: def.id,
                        version: def.version,
                        index_id: def.index_id().0,
                        root: t.tree().root(),
                    });
                    created.push(def.name);
                    t
                }
            };
            tables.push(table);
        }
        let startup = if fresh {
            CatalogStartup::Bootstrapped
        } else if created.is_empty() {
            CatalogStartup::Opened
        } else {
            CatalogStartup::Upgraded {
                created: created.clone(),
            }
        };
        if created.is_empty() {
            drop(mtr);
        } else {
            if fresh {
                mtr.apply(
                    hdr,
                    &RedoRecord::InitPage {
                        page_type: PageType::DictHeader,
                    },
                )
                .map_err(CatalogError::from_mtr)?;
            }
            write_header(&mut mtr, hdr, &header)?;
            mtr.commit_durable().map_err(CatalogError::from_mtr)?;
        }
        match &startup {
            CatalogStartup::Bootstrapped => {
                info!(tables = SYSTEM_TABLES.len(), "created the data dictionary")
            }
            CatalogStartup::Upgraded { created } => {
                info!(?created, "created missing system tables")
            }
            CatalogStartup::Opened => {}
        }
        Ok(Catalog {
            tables,
            latch: RwLock::new(()),
            poison: OnceLock::new(),
            startup,
        })
    }

    /// What [`Catalog::open_or_bootstrap`] found.
    pub fn startup(&self) -> &CatalogStartup {
        &self.startup
    }

    /// The system table `def`. Crate-private: every access to the trees
    /// goes through a method that takes the catalog's lock.
    pub(crate) fn table(&self, def: &SystemTableDef) -> Option<&SystemTable> {
        self.tables.iter().find(|t| t.def().id == def.id)
    }

    fn known(&self, def: &'static SystemTableDef) -> CatalogResult<&SystemTable> {
        self.table(def)
            .ok_or_else(|| CatalogError::corrupt(def.name, "system table missing from the catalog"))
    }

    fn check_poison(&self) -> CatalogResult<()> {
        match self.poison.get() {
            Some(reason) => Err(CatalogError::Poisoned {
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Every row of `mysql.user`, `mysql.db`, `mysql.tables_priv` and
    /// `mysql.schemata`, each in key order. Waits for a running
    /// [`Catalog::apply`]; never sees half a batch.
    pub fn load_all(&self, store: &PageStore) -> CatalogResult<CatalogSnapshot> {
        let _shared = self.latch.read();
        self.check_poison()?;
        Ok(CatalogSnapshot {
            accounts: self.known(&USER)?.scan(store)?,
            db_grants: self.known(&DB)?.scan(store)?,
            table_grants: self.known(&TABLES_PRIV)?.scan(store)?,
            schemata: self.known(&SCHEMATA)?.scan(store)?,
        })
    }

    /// Every live row of the system table of `R`, in key order (waits for
    /// a running [`Catalog::apply`]).
    pub fn scan<R: SystemRow>(&self, store: &PageStore) -> CatalogResult<Vec<R>> {
        let _shared = self.latch.read();
        self.check_poison()?;
        self.known(R::DEF)?.scan(store)
    }

    /// The live row with `key` in the system table of `R`, if any (waits
    /// for a running [`Catalog::apply`]).
    pub fn get<R: SystemRow, K: SystemKey>(
        &self,
        store: &PageStore,
        key: &K,
    ) -> CatalogResult<Option<R>> {
        let _shared = self.latch.read();
        self.check_poison()?;
        self.known(R::DEF)?.get(store, key)
    }

    /// Applies `changes` in order, all or nothing, durably: every change
    /// goes into one mini-transaction, committed and then flushed to the
    /// redo log's disk before this returns `Ok`. On any error before the
    /// commit the mini-transaction is dropped, which restores every page
    /// it changed: nothing of the batch is visible, now or after a
    /// restart. If the log fails after the commit (the batch is in memory
    /// but its durability unknown) the catalog is poisoned: this and every
    /// later call return [`CatalogError::Poisoned`].
    ///
    /// Calls are serialised (one batch at a time, readers wait).
    pub fn apply(
        &self,
        store: &PageStore,
        changes: &[CatalogChange],
    ) -> CatalogResult<ApplyReport> {
        let _exclusive = self.latch.write();
        self.check_poison()?;
        let mut report = ApplyReport::default();
        if changes.is_empty() {
            return Ok(report);
        }
        let mut mtr = Mtr::start(store).map_err(CatalogError::from_mtr)?;
        for (i, change) in changes.iter().enumerate() {
            if let Err(e) = self.apply_one(&mut mtr, change, &mut report) {
                warn!(change = i, batch = changes.len(), error = %e, "catalog batch refused; nothing applied");
                return Err(e);
            }
        }
        let Some(range) = mtr.commit().map_err(CatalogError::from_mtr)? else {
            return Ok(report);
        };
        if let Err(e) = store.log.flush_up_to(range.end) {
            let reason = e.to_string();
            error!(error = %reason, lsn = range.end.get(), "catalog batch committed but not durable; catalog poisoned");
            let _ = self.poison.set(reason.clone());
            return Err(CatalogError::Poisoned { reason });
        }
        report.lsn = Some(range.end);
        Ok(report)
    }

    fn apply_one(
        &self,
        mtr: &mut Mtr<'_>,
        change: &CatalogChange,
        report: &mut ApplyReport,
    ) -> CatalogResult<()> {
        let put = |report: &mut ApplyReport, o: PutOutcome| match o {
            PutOutcome::Inserted => report.inserted += 1,
            PutOutcome::Updated => report.updated += 1,
        };
        let delete = |report: &mut ApplyReport, found: bool| {
            if found {
                report.deleted += 1;
            } else {
                report.absent += 1;
            }
        };
        match change {
            CatalogChange::PutAccount(r) => put(report, self.known(&USER)?.put(mtr, r)?),
            CatalogChange::DeleteAccount(k) => delete(report, self.known(&USER)?.delete(mtr, k)?),
            CatalogChange::PutDbGrant(r) => put(report, self.known(&DB)?.put(mtr, r)?),
            CatalogChange::DeleteDbGrant(k) => delete(report, self.known(&DB)?.delete(mtr, k)?),
            CatalogChange::PutTableGrant(r) => put(report, self.known(&TABLES_PRIV)?.put(mtr, r)?),
            CatalogChange::DeleteTableGrant(k) => {
                delete(report, self.known(&TABLES_PRIV)?.delete(mtr, k)?)
            }
            CatalogChange::PutSchema(r) => put(report, self.known(&SCHEMATA)?.put(mtr, r)?),
            CatalogChange::DeleteSchema(k) => {
                delete(report, self.known(&SCHEMATA)?.delete(mtr, k)?)
            }
        }
        Ok(())
    }

    /// Hands out `request.tables` table ids, `request.indexes` index ids
    /// and `request.spaces` tablespace ids, durably: the counters in the
    /// dictionary header move in one mini-transaction that is flushed
    /// before this returns, so no id is handed out twice, even across a
    /// crash. Allocations serialise on the header page's latch.
    pub fn allocate_ids(
        &self,
        store: &PageStore,
        request: IdRequest,
    ) -> CatalogResult<AllocatedIds> {
        self.check_poison()?;
        let mut mtr = Mtr::start(store).map_err(CatalogError::from_mtr)?;
        let hdr = mtr
            .get(dict_header_page(), LatchMode::Exclusive)
            .map_err(CatalogError::from_mtr)?;
        let old = present_header(mtr.page(hdr))?.counters;
        let tables = take_u64(old.next_table_id, request.tables, u64::MAX, "table")?;
        let indexes = take_u64(old.next_index_id, request.indexes, u64::MAX, "index")?;
        let spaces = take_u64(
            u64::from(old.next_space_id),
            request.spaces,
            u64::from(MAX_SPACE_ID) + 1,
            "space",
        )?;
        let ids = AllocatedIds {
            spaces: narrow(spaces.start)..narrow(spaces.end),
            tables,
            indexes,
        };
        if request == IdRequest::default() {
            return Ok(ids);
        }
        let new = Counters {
            next_table_id: ids.tables.end,
            next_index_id: ids.indexes.end,
            next_space_id: ids.spaces.end,
        };
        mtr.apply(
            hdr,
            &RedoRecord::WriteBytes {
                offset: OFF_COUNTERS,
                bytes: new.encode().to_vec().into(),
            },
        )
        .map_err(CatalogError::from_mtr)?;
        let Some(range) = mtr.commit().map_err(CatalogError::from_mtr)? else {
            return Ok(ids);
        };
        if let Err(e) = store.log.flush_up_to(range.end) {
            let reason = e.to_string();
            error!(error = %reason, "id allocation committed but not durable; catalog poisoned");
            let _ = self.poison.set(reason.clone());
            return Err(CatalogError::Poisoned { reason });
        }
        Ok(ids)
    }

    /// The id counters as they stand (the next id of each kind).
    pub fn counters(&self, store: &PageStore) -> CatalogResult<Counters> {
        self.check_poison()?;
        let mut mtr = Mtr::start_unchecked(store);
        let hdr = mtr
            .get(dict_header_page(), LatchMode::Shared)
            .map_err(CatalogError::from_mtr)?;
        Ok(present_header(mtr.page(hdr))?.counters)
    }

    /// The dictionary header as stored.
    pub fn header(&self, store: &PageStore) -> CatalogResult<DictHeader> {
        let mut mtr = Mtr::start_unchecked(store);
        let hdr = mtr
            .get(dict_header_page(), LatchMode::Shared)
            .map_err(CatalogError::from_mtr)?;
        present_header(mtr.page(hdr))
    }

    /// Checks every system table's B+tree (CHECK TABLE); returns each
    /// table's name and statistics. Waits for a running `apply`.
    pub fn validate(&self, store: &PageStore) -> CatalogResult<Vec<(&'static str, TreeStats)>> {
        let _shared = self.latch.read();
        self.tables
            .iter()
            .map(|t| Ok((t.def().name, t.validate(store)?)))
            .collect()
    }
}

/// A handle on the table a header slot names, after checking the slot
/// matches the definition.
fn open_slot(def: &'static SystemTableDef, slot: &RootSlot) -> CatalogResult<SystemTable> {
    if slot.version != def.version {
        return Err(CatalogError::LayoutMismatch {
            table: def.name,
            found: slot.version,
            expected: def.version,
        });
    }
    if slot.index_id != def.index_id().0 {
        return Err(CatalogError::corrupt(
            "dictionary header",
            format!(
                "{} has index id {}, expected {}",
                def.name,
                slot.index_id,
                def.index_id().0
            ),
        ));
    }
    SystemTable::open(def, slot.root)
}

fn write_header(mtr: &mut Mtr<'_>, hdr: PageRef, header: &DictHeader) -> CatalogResult<()> {
    mtr.apply(
        hdr,
        &RedoRecord::WriteBytes {
            offset: DictHeader::ENCODE_OFFSET,
            bytes: header.encode().into(),
        },
    )
    .map_err(CatalogError::from_mtr)
}

fn present_header(page: &[u8]) -> CatalogResult<DictHeader> {
    match DictHeader::read(page)? {
        HeaderState::Present(h) => Ok(h),
        HeaderState::Absent => Err(CatalogError::corrupt(
            "dictionary header",
            "page 7 is empty although the catalog is open",
        )),
    }
}

/// `[next, next + n)`, refused when it would pass `limit`.
fn take_u64(
    next: u64,
    n: u32,
    limit: u64,
    kind: &'static str,
) -> CatalogResult<std::ops::Range<u64>> {
    match next.checked_add(u64::from(n)) {
        Some(end) if end <= limit => Ok(next..end),
        _ => Err(CatalogError::IdsExhausted { kind }),
    }
}

/// A space id range bound, already checked to be at most `MAX_SPACE_ID + 1`.
fn narrow(v: u64) -> u32 {
    // Invariant: take_u64 bounded it by MAX_SPACE_ID + 1 < u32::MAX.
    u32::try_from(v).expect("space ids are bounded by MAX_SPACE_ID")
}
