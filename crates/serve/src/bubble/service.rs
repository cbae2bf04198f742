//! The `sort.v1.SortService` gRPC service on tonic, and the request rules it
//! shares with the Connect JSON form: the length limit, and where a sort runs.
//!
//! A list of up to [`INLINE_MAX`] numbers (the original experiment's 1000 among them) is
//! sorted on the async worker that received it: it takes well under a
//! millisecond, less than a thread hand-off would cost in latency. A longer
//! list (up to [`MAX_LEN`], about 30 ms of CPU) is sorted on tokio's blocking
//! pool, at most one per core at a time, so that a burst of long lists
//! queues instead of stalling the connections' I/O or spawning hundreds of
//! threads.

use std::sync::Arc;

use stackbench_contract::bubble::MAX_LEN;
use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};

use super::proto::List;
use super::proto::sort_service_server::{SortService, SortServiceServer};
use super::sort::SortKind;

/// Lists up to this length are sorted inline on the async worker (about
/// 1 ms of CPU at this length).
pub const INLINE_MAX: usize = 2048;
/// The largest gRPC message accepted (tonic's default, stated here): a bigger
/// one is refused by the transport with `RESOURCE_EXHAUSTED` before it is read.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A list longer than [`MAX_LEN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the list has {len} numbers; bubble sort accepts at most {MAX_LEN} (it is O(n²): a much longer list \
     would hold a core for minutes); send a shorter list"
)]
pub struct TooLong {
    pub len: usize,
}

/// Checks the length rule of the contract.
pub fn check_len(len: usize) -> Result<(), TooLong> {
    if len > MAX_LEN { Err(TooLong { len }) } else { Ok(()) }
}

/// Sorts lists for both protocols, applying [`check_len`] and choosing where
/// the sort runs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sorter {
    /// Permits for concurrent sorts of long lists: one per core.
    long_sorts: Arc<Semaphore>,
    kind: SortKind,
}

impl Default for Sorter {
    fn default() -> Self {
        Sorter::new(SortKind::default())
    }
}

impl Sorter {
    pub fn new(kind: SortKind) -> Sorter {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Sorter { long_sorts: Arc::new(Semaphore::new(cores)), kind }
    }
}

impl Sorter {
    /// Sorts `data` ascending with bubble sort.
    pub async fn sort(&self, mut data: Vec<i32>) -> Result<Vec<i32>, TooLong> {
        check_len(data.len())?;
        let kind = self.kind;
        if data.len() <= INLINE_MAX {
            kind.sort(&mut data);
            return Ok(data);
        }
        // The semaphore is never closed, so acquiring cannot fail.
        let _permit = self.long_sorts.acquire().await.expect("the semaphore is never closed");
        let sorted = tokio::task::spawn_blocking(move || {
            kind.sort(&mut data);
            data
        })
        .await;
        match sorted {
            Ok(data) => Ok(data),
            // bubble_sort does not panic; if the task is cancelled at shutdown
            // the caller is gone too.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

#[tonic::async_trait]
impl SortService for Sorter {
    async fn bubble_sort(&self, request: Request<List>) -> Result<Response<List>, Status> {
        let data = request.into_inner().data;
        match self.sort(data).await {
            Ok(data) => Ok(Response::new(List { data })),
            Err(e) => Err(Status::invalid_argument(e.to_string())),
        }
    }
}

/// The tonic service, with the message size limit set explicitly.
pub fn grpc_service(sorter: Sorter) -> SortServiceServer<Sorter> {
    SortServiceServer::new(sorter).max_decoding_message_size(MAX_MESSAGE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackbench_contract::bubble::{SEED, SEED_SORTED};

    #[tokio::test]
    async fn sorts_inline_and_on_the_blocking_pool() {
        let sorter = Sorter::default();
        assert_eq!(sorter.sort(SEED.clone()).await.unwrap(), *SEED_SORTED);
        let long: Vec<i32> = (0..INLINE_MAX as i32 + 10).rev().collect();
        let sorted = sorter.sort(long).await.unwrap();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sorter.sort(Vec::new()).await.unwrap(), Vec::<i32>::new());
    }

    #[tokio::test]
    async fn the_length_limit() {
        let sorter = Sorter::default();
        let max = vec![1; MAX_LEN];
        assert_eq!(sorter.sort(max).await.unwrap().len(), MAX_LEN);
        let err = sorter.sort(vec![1; MAX_LEN + 1]).await.unwrap_err();
        assert_eq!(err, TooLong { len: MAX_LEN + 1 });
        let msg = err.to_string();
        assert!(msg.contains("10001") && msg.contains("10000"), "{msg}");
    }

    #[tokio::test]
    async fn the_grpc_method_answers_invalid_argument() {
        let sorter = Sorter::default();
        let status = SortService::bubble_sort(&sorter, Request::new(List { data: vec![0; MAX_LEN + 1] }))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().contains("at most 10000"), "{}", status.message());
        let ok = SortService::bubble_sort(&sorter, Request::new(List { data: vec![3, 1, 2] })).await.unwrap();
        assert_eq!(ok.into_inner().data, [1, 2, 3]);
    }
}
