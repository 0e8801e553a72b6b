//! Reading and writing.
