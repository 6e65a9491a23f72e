//! Where a typed read finds its columns, worked out once per result.
//!
//! A type that reads by position (a tuple, a `#[hyper(by_position)]` or
//! tuple struct) takes column `k` as its `k`-th value. A type that reads by
//! name (`#[derive(FromRow)]` on a struct with named fields) would look
//! each name up in every row; instead a typed stream looks the names up
//! once ([`ColumnCache::plan`]) and reads rows through a [`ColumnMap`].
//! When the names are the result's columns in order (the usual `SELECT`
//! of a struct's fields) the type's in-order readers apply too, so it
//! reads as fast as a tuple.

use crate::from_row::FromRow;
use crate::rows::Schema;

/// Where a [`FromRow`] type's columns are in a result: its `k`-th column
/// (in field order, flattened fields included) is the result's column
/// [`index(k)`](Self::index). What `#[derive(FromRow)]`'s code reads
/// through; not for use by hand.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ColumnMap<'a> {
    /// `None`: column `k` is `offset + k`.
    map: Option<&'a [usize]>,
    offset: usize,
}

impl<'a> ColumnMap<'a> {
    /// Column `k` is the result's column `k`: reads by position.
    pub const IDENTITY: ColumnMap<'static> = ColumnMap {
        map: None,
        offset: 0,
    };

    fn new(map: &'a [usize]) -> ColumnMap<'a> {
        ColumnMap {
            map: Some(map),
            offset: 0,
        }
    }

    /// The result's column holding the type's `k`-th column. A `k` past
    /// the map (never: a plan maps every name it was given) is an index
    /// no result has, which `try_get` reports as a missing column.
    #[inline(always)]
    pub fn index(&self, k: usize) -> usize {
        match self.map {
            None => self.offset + k,
            Some(map) => map.get(self.offset + k).copied().unwrap_or(usize::MAX),
        }
    }

    /// The map of a flattened field whose columns start at the `start`-th.
    #[inline(always)]
    pub fn skip(self, start: usize) -> ColumnMap<'a> {
        ColumnMap {
            map: self.map,
            offset: self.offset + start,
        }
    }
}

/// How a typed stream reads its rows as some `T`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadPlan {
    /// The in-order readers ([`FromRow::from_values`] and the rest) give
    /// what `from_row` would: `T` reads by position, or its names are the
    /// result's columns in order.
    pub(crate) in_order: bool,
    /// [`FromRow::reads_plain`] of the result's columns (and in order).
    pub(crate) plain: bool,
    /// Rows are read with [`FromRow::from_columns`] over the cache's map:
    /// `T` reads by name and every name was found. Otherwise `from_row`,
    /// which reports the missing column.
    pub(crate) mapped: bool,
}

/// The names of the last by-name type a stream read and where they are in
/// its result. Kept by the row cursor: a stream read as the same type row
/// after row (`next_as`) compares the names and looks nothing up again.
#[derive(Debug, Default)]
pub(crate) struct ColumnCache {
    names: Vec<&'static str>,
    map: Vec<usize>,
    found: bool,
    in_order: bool,
    /// The last plan made, by the functions that made it.
    last: Option<(NamesFn, PlainFn, ReadPlan)>,
}

type NamesFn = fn(&mut dyn FnMut(&'static str)) -> bool;
type PlainFn = fn(&Schema) -> bool;

impl ColumnCache {
    /// How to read `schema`'s rows as `T`. For a by-position type this is
    /// [`FromRow::reads_plain`] and nothing else (the cost tuples always
    /// had); for a by-name type the names are compared with the cached
    /// ones and looked up only when they differ.
    ///
    /// A stream read with `next_as` asks per row: when `T`'s
    /// `column_names` and `reads_plain` are the functions of the last
    /// plan, that plan is the answer (two types whose functions were
    /// merged into one have the same code, so the same answer).
    #[inline]
    pub(crate) fn plan<'r, T: FromRow<'r>>(&mut self, schema: &Schema) -> ReadPlan {
        let key: (NamesFn, PlainFn) = (T::column_names, T::reads_plain);
        if let Some((names, plain, plan)) = self.last {
            if std::ptr::fn_addr_eq(names, key.0) && std::ptr::fn_addr_eq(plain, key.1) {
                return plan;
            }
        }
        let plan = self.plan_anew::<T>(schema);
        self.last = Some((key.0, key.1, plan));
        plan
    }

    fn plan_anew<'r, T: FromRow<'r>>(&mut self, schema: &Schema) -> ReadPlan {
        let (mut same, mut count) = (true, 0);
        let by_name = T::column_names(&mut |name| {
            same &= self.names.get(count) == Some(&name);
            count += 1;
        });
        if !by_name {
            return ReadPlan {
                in_order: true,
                plain: T::reads_plain(schema),
                mapped: false,
            };
        }
        if !same || count != self.names.len() {
            self.resolve::<T>(schema);
        }
        ReadPlan {
            in_order: self.in_order,
            plain: self.in_order && T::reads_plain(schema),
            mapped: self.found,
        }
    }

    #[cold]
    fn resolve<'r, T: FromRow<'r>>(&mut self, schema: &Schema) {
        self.names.clear();
        T::column_names(&mut |name| self.names.push(name));
        self.map.clear();
        self.map
            .extend(self.names.iter().map_while(|name| schema.index_of(name)));
        self.found = self.map.len() == self.names.len();
        self.in_order = self.found
            && self.map.len() == schema.len()
            && self.map.iter().enumerate().all(|(k, &i)| k == i);
    }

    /// The map [`plan`](Self::plan) made for the last by-name type.
    #[inline(always)]
    pub(crate) fn map(&self) -> ColumnMap<'_> {
        ColumnMap::new(&self.map)
    }
}

#[cfg(test)]
mod tests {
    use hyperdb_api_core::types::SqlType;

    use super::*;
    use crate::error::Result;
    use crate::rows::Row;

    /// Reads columns `b` then `a` by name, as the derive's code does.
    struct ByName;

    impl FromRow<'_> for ByName {
        fn from_row(_: &Row) -> Result<Self> {
            Ok(ByName)
        }
        fn column_names(name: &mut dyn FnMut(&'static str)) -> bool {
            name("b");
            name("a");
            true
        }
        fn reads_plain(_: &Schema) -> bool {
            true
        }
    }

    fn schema(names: &[&str]) -> std::sync::Arc<Schema> {
        Schema::from_sql_types(names.iter().map(|n| (n.to_string(), Some(SqlType::Int))))
    }

    fn indices(cache: &ColumnCache, n: usize) -> Vec<usize> {
        (0..n).map(|k| cache.map().index(k)).collect()
    }

    #[test]
    fn names_in_result_order_read_in_order() {
        let mut cache = ColumnCache::default();
        let plan = cache.plan::<ByName>(&schema(&["b", "a"]));
        assert!(plan.in_order && plan.plain && plan.mapped, "{plan:?}");
        assert_eq!(indices(&cache, 2), [0, 1]);
    }

    #[test]
    fn names_elsewhere_are_mapped_and_not_read_in_order() {
        let mut cache = ColumnCache::default();
        let plan = cache.plan::<ByName>(&schema(&["x", "a", "b"]));
        assert!(!plan.in_order && !plan.plain && plan.mapped, "{plan:?}");
        assert_eq!(indices(&cache, 2), [2, 1]);
        // An extra column after them: found, but not the row's layout.
        let plan = ColumnCache::default().plan::<ByName>(&schema(&["b", "a", "c"]));
        assert!(!plan.in_order && plan.mapped, "{plan:?}");
    }

    #[test]
    fn a_missing_name_leaves_reads_to_from_row() {
        let mut cache = ColumnCache::default();
        let plan = cache.plan::<ByName>(&schema(&["b"]));
        assert!(!plan.in_order && !plan.plain && !plan.mapped, "{plan:?}");
    }

    #[test]
    fn by_position_types_always_read_in_order() {
        let mut cache = ColumnCache::default();
        let plan = cache.plan::<(i32, i32)>(&schema(&["b", "a"]));
        assert!(plan.in_order && plan.plain && !plan.mapped, "{plan:?}");
        let plan = cache.plan::<(i64, i32)>(&schema(&["b", "a"]));
        assert!(plan.in_order && !plan.plain, "{plan:?}");
    }

    #[test]
    fn cached_names_are_looked_up_again_only_when_they_change() {
        let mut cache = ColumnCache::default();
        cache.plan::<ByName>(&schema(&["a", "b"]));
        assert_eq!(indices(&cache, 2), [1, 0]);
        // Same names: the map stays (a changed schema is a new stream,
        // with a new cache; this shows the lookup was skipped).
        cache.plan::<ByName>(&schema(&["b", "a"]));
        assert_eq!(indices(&cache, 2), [1, 0]);
        assert_eq!(cache.map().index(2), usize::MAX, "past the map");
    }

    #[test]
    fn a_stream_switching_types_gets_each_types_plan() {
        let mut cache = ColumnCache::default();
        let ab = schema(&["b", "a"]);
        for _ in 0..2 {
            let plan = cache.plan::<ByName>(&ab);
            assert!(plan.in_order && plan.plain && plan.mapped, "{plan:?}");
            let plan = cache.plan::<(i64, i32)>(&ab);
            assert!(plan.in_order && !plan.plain && !plan.mapped, "{plan:?}");
            let plan = cache.plan::<(i32, i32)>(&ab);
            assert!(plan.in_order && plan.plain && !plan.mapped, "{plan:?}");
        }
    }

    #[test]
    fn flattened_maps_start_further_in() {
        let map = [4, 2, 7];
        let m = ColumnMap::new(&map).skip(1);
        assert_eq!((m.index(0), m.index(1)), (2, 7));
        let id = ColumnMap::IDENTITY.skip(3);
        assert_eq!(id.index(2), 5);
    }
}
