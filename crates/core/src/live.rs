//! [`Live`]: a value every task of a process reads and one watcher replaces while the
//! process runs (the categories an admin edits in the panel, for example).

use std::sync::{Arc, PoisonError, RwLock};

/// A shared, replaceable value. Readers take a cheap snapshot ([`Live::get`]) and keep it for
/// as long as they work with it; [`Live::set`] swaps in a new value for every later reader.
/// Clones share the value.
#[derive(Debug)]
pub struct Live<T>(Arc<RwLock<Arc<T>>>);

impl<T> Clone for Live<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Live<T> {
    pub fn new(value: T) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(value))))
    }

    /// The value now.
    pub fn get(&self) -> Arc<T> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the value for every reader from now on.
    pub fn set(&self, value: T) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(value);
    }
}

impl<T: Default> Default for Live<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> From<T> for Live<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_see_a_replaced_value_and_old_snapshots_stay_whole() {
        let a = Live::new(vec![1, 2]);
        let b = a.clone();
        let before = b.get();
        a.set(vec![3]);
        assert_eq!(*b.get(), vec![3]);
        assert_eq!(*before, vec![1, 2]);
    }
}
