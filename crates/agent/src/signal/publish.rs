//! Owns how a table the signal handler reads is replaced while handlers may be reading it:
//! the new table is published with one atomic store, and the old one is freed only once no
//! handler runs (a handler that started after the store sees the new table; one that
//! started before holds the handler count above zero until it returns).

#![allow(unsafe_code)]

use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use super::IN_HANDLER;

/// A table the handler reads without a lock (`T`), replaced by other threads.
#[derive(Debug)]
pub struct Published<T> {
    current: AtomicPtr<T>,
    /// Tables replaced but perhaps still read by a running handler.
    retired: Mutex<Vec<Box<T>>>,
}

impl<T> Published<T> {
    /// Nothing published yet.
    pub const fn new() -> Published<T> {
        Published {
            current: AtomicPtr::new(ptr::null_mut()),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// The current table. Call only from the signal handler, or between [`reading`]'s
    /// increments of the handler count (the table lives until the count falls to zero).
    pub fn get(&self) -> Option<&T> {
        let table = self.current.load(Ordering::SeqCst);
        // SAFETY: a published table is freed only after it was replaced and the handler
        // count was seen at zero; the caller holds the count above zero.
        unsafe { table.as_ref() }
    }

    /// Publishes `table`; the one it replaces is freed by a later [`Published::reclaim`].
    pub fn publish(&self, table: Box<T>) {
        let Ok(mut retired) = self.retired.lock() else {
            // A poisoned lock: leak the new table rather than free a table in use.
            let _ = Box::into_raw(table);
            return;
        };
        let old = self.current.swap(Box::into_raw(table), Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: `old` came from Box::into_raw in an earlier publish and left the
            // atomic just now, so it is owned here.
            retired.push(unsafe { Box::from_raw(old) });
        }
        Self::free_if_idle(&mut retired);
    }

    /// Frees the replaced tables if no handler runs now.
    pub fn reclaim(&self) {
        if let Ok(mut retired) = self.retired.lock() {
            Self::free_if_idle(&mut retired);
        }
    }

    fn free_if_idle(retired: &mut Vec<Box<T>>) {
        // Every table in `retired` left the atomic before this load; a handler still
        // reading one started before that and has not returned, so the count is above zero.
        if !retired.is_empty() && IN_HANDLER.load(Ordering::SeqCst) == 0 {
            retired.clear();
        }
    }
}

impl<T> Default for Published<T> {
    fn default() -> Self {
        Published::new()
    }
}

/// Runs `f` counted as a signal handler, so the published tables it reads stay alive (for
/// reads outside the handler: the walk's checks at start).
pub fn reading<R>(f: impl FnOnce() -> R) -> R {
    IN_HANDLER.fetch_add(1, Ordering::SeqCst);
    let result = f();
    IN_HANDLER.fetch_sub(1, Ordering::SeqCst);
    result
}
