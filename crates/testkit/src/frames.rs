//! A response body of given frames (data, then trailers) with no declared length, for the
//! hyper servers tests write: HTTP/1.1 sends it chunked, h2 as DATA frames and a trailing
//! HEADERS frame (a gRPC answer's `grpc-status`).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};

/// The frames, sent in order.
pub struct Frames(pub VecDeque<Frame<Bytes>>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }
}
