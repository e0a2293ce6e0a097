//! An API error as the events that carry one write it.

use listwatch_core::{ApiError, Rv};
use serde::Serialize;

/// An API error: its status code (0 when there is none: a refused connection, a reconcile's own
/// error), the apiserver's message, and the RVs a 410 or 504 names.
#[derive(Serialize)]
pub(super) struct ErrorOut {
    error: &'static str,
    status_code: u16,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    requested_rv: Option<Rv>,
    /// A 410's `(oldest-1)`, a 504's current RV.
    #[serde(skip_serializing_if = "Option::is_none")]
    boundary_rv: Option<Rv>,
}

pub(super) fn error_out(e: ApiError) -> ErrorOut {
    let (error, requested_rv, boundary_rv) = match e {
        ApiError::Conflict => ("conflict", None, None),
        ApiError::AlreadyExists => ("already_exists", None, None),
        ApiError::NotFound => ("not_found", None, None),
        ApiError::UidMismatch => ("uid_mismatch", None, None),
        ApiError::TooOld {
            requested,
            oldest_minus_one,
        } => ("too_old", Some(requested), Some(oldest_minus_one.get())),
        ApiError::WatchCompacted => ("watch_compacted", None, None),
        ApiError::ContinueExpired => ("continue_expired", None, None),
        ApiError::TooLargeRv { requested, current } => {
            ("too_large_rv", Some(requested), Some(current.get()))
        }
        ApiError::TooManyRequests => ("too_many_requests", None, None),
        ApiError::ConnectionRefused => ("connection_refused", None, None),
        ApiError::ReconcileError => ("reconcile_error", None, None),
        ApiError::NameTooLong => ("name_too_long", None, None),
        ApiError::InvalidName { .. } => ("invalid_name", None, None),
        ApiError::InvalidLabelValue => ("invalid_label_value", None, None),
        ApiError::ListCompacted => ("list_compacted", None, None),
        ApiError::WatchListForbidden => ("watch_list_forbidden", None, None),
        ApiError::FinalizerWhileDeleting => ("finalizer_while_deleting", None, None),
        ApiError::TooManyEntries => ("too_many_entries", None, None),
        ApiError::StaleRead { read, written } => ("stale_read", Some(written), Some(read.get())),
    };
    ErrorOut {
        error,
        status_code: e.code(),
        message: e.message(),
        requested_rv,
        boundary_rv,
    }
}
