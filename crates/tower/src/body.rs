//! The bodies the layer hands on: the request's (replayed byte for byte
//! once read, or passed unread) and the response's (a refusal, or the
//! inner service's passed through frame by frame, never buffered).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use pin_project_lite::pin_project;

pin_project! {
    /// The request body the inner service reads: the bytes the layer read
    /// and verified, replayed unchanged, or the original body when the
    /// layer had no reason to read it (not a `POST`).
    #[project = RequestBodyProj]
    pub enum RequestBody<B> {
        /// The body as read, in one frame.
        Read { bytes: Option<Bytes> },
        /// The request's own body, unread.
        Unread { #[pin] body: B },
    }
}

impl<B> RequestBody<B> {
    pub(crate) fn read(bytes: Bytes) -> RequestBody<B> {
        RequestBody::Read {
            bytes: (!bytes.is_empty()).then_some(bytes),
        }
    }
}

impl<B> Body for RequestBody<B>
where
    B: Body,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project() {
            RequestBodyProj::Read { bytes } => {
                Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b))))
            }
            RequestBodyProj::Unread { body } => body.poll_frame(cx).map(|frame| {
                frame.map(|f| {
                    // `Bytes` itself when the body's data is `Bytes` (no copy).
                    f.map(|frame| frame.map_data(|mut d| d.copy_to_bytes(d.remaining())))
                })
            }),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Read { bytes } => bytes.is_none(),
            RequestBody::Unread { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Read { bytes } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            RequestBody::Unread { body } => body.size_hint(),
        }
    }
}

pin_project! {
    /// The response body: a refusal the core rendered, or the inner
    /// service's body passed through as it streams (SSE included).
    #[project = ResponseBodyProj]
    pub enum ResponseBody<B> {
        Refusal { bytes: Option<Bytes> },
        Inner { #[pin] body: B },
    }
}

impl<B> Body for ResponseBody<B>
where
    B: Body,
    B::Data: From<Bytes>,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        match self.project() {
            ResponseBodyProj::Refusal { bytes } => {
                Poll::Ready(bytes.take().map(|b| Ok(Frame::data(B::Data::from(b)))))
            }
            ResponseBodyProj::Inner { body } => body.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Refusal { bytes } => bytes.is_none(),
            ResponseBody::Inner { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Refusal { bytes } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::Inner { body } => body.size_hint(),
        }
    }
}

/// What reading the request body gave.
pub(crate) enum Read {
    /// The whole body, at most the limit.
    Whole(Bytes),
    /// The first `limit + 1` bytes: enough for the core to refuse the body
    /// as too large; the rest is left unread.
    OverLimit(Bytes),
}

/// Reads `body` up to `limit` bytes, stopping at one byte more.
pub(crate) async fn read_limited<B>(body: B, limit: usize) -> Result<Read, B::Error>
where
    B: Body,
{
    let mut body = std::pin::pin!(body);
    let cap = limit.saturating_add(1);
    // A body that arrives in one frame is handed on without a copy.
    let mut first: Option<Bytes> = None;
    let mut more: Option<BytesMut> = None;
    let mut size = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(mut data) = frame?.into_data() else {
            continue; // trailers: not part of the body the core reads
        };
        let n = data.remaining();
        let room = cap - size;
        let take = n.min(room);
        let chunk = data.copy_to_bytes(take);
        size += take;
        match (&mut first, &mut more) {
            (None, None) => first = Some(chunk),
            (Some(f), None) => {
                let mut buf = BytesMut::with_capacity(f.len() + chunk.len());
                buf.extend_from_slice(f);
                buf.extend_from_slice(&chunk);
                first = None;
                more = Some(buf);
            }
            (_, Some(buf)) => buf.extend_from_slice(&chunk),
        }
        if size >= cap {
            let bytes = more.map_or_else(|| first.unwrap_or_default(), BytesMut::freeze);
            return Ok(Read::OverLimit(bytes));
        }
    }
    Ok(Read::Whole(more.map_or_else(
        || first.unwrap_or_default(),
        BytesMut::freeze,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use std::collections::VecDeque;
    use std::convert::Infallible;

    /// A body arriving in the given chunks.
    struct Chunks(VecDeque<&'static [u8]>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(
                self.0
                    .pop_front()
                    .map(|c| Ok(Frame::data(Bytes::from_static(c)))),
            )
        }
    }

    async fn read(parts: &[&'static [u8]], limit: usize) -> (bool, Vec<u8>) {
        match read_limited(Chunks(parts.iter().copied().collect()), limit)
            .await
            .unwrap()
        {
            Read::Whole(b) => (false, b.to_vec()),
            Read::OverLimit(b) => (true, b.to_vec()),
        }
    }

    #[tokio::test]
    async fn reads_whole_bodies_and_stops_one_byte_over_the_limit() {
        assert_eq!(read(&[b"abcd"], 4).await, (false, b"abcd".to_vec()));
        assert_eq!(
            read(&[b"ab", b"", b"cd"], 4).await,
            (false, b"abcd".to_vec())
        );
        assert_eq!(read(&[b"abcdefgh"], 4).await, (true, b"abcde".to_vec()));
        assert_eq!(
            read(&[b"ab", b"cd", b"ef", b"gh"], 4).await,
            (true, b"abcde".to_vec())
        );
        assert_eq!(read(&[], 4).await, (false, vec![]));
    }

    #[tokio::test]
    async fn replays_what_was_read() {
        let body = RequestBody::<Full<Bytes>>::read(Bytes::from_static(b"xyz"));
        assert_eq!(body.size_hint().exact(), Some(3));
        assert_eq!(&body.collect().await.unwrap().to_bytes()[..], b"xyz");
        let empty = RequestBody::<Full<Bytes>>::read(Bytes::new());
        assert!(empty.is_end_stream());
    }
}
