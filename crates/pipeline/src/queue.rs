//! Queues between stages. In one process they are channels; in the fleet,
//! RabbitMQ queues implement the same trait.

use std::future::Future;
use thiserror::Error;
use tokio::sync::{mpsc, Mutex};

/// The queue was closed: no more messages are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the queue is closed")]
pub struct QueueClosed;

/// A FIFO of messages shared by producers and consumers.
pub trait Queue<T: Send>: Send + Sync {
    /// Adds a message.
    fn push(&self, message: T) -> impl Future<Output = Result<(), QueueClosed>> + Send;
    /// The next message; `None` once the queue is closed and drained.
    fn pop(&self) -> impl Future<Output = Option<T>> + Send;
    /// Refuses further messages; consumers drain what is left, then get `None`.
    fn close(&self);
}

/// An unbounded in-process queue.
pub struct LocalQueue<T> {
    sender: std::sync::Mutex<Option<mpsc::UnboundedSender<T>>>,
    receiver: Mutex<mpsc::UnboundedReceiver<T>>,
}

impl<T> Default for LocalQueue<T> {
    fn default() -> LocalQueue<T> {
        let (tx, rx) = mpsc::unbounded_channel();
        LocalQueue {
            sender: std::sync::Mutex::new(Some(tx)),
            receiver: Mutex::new(rx),
        }
    }
}

impl<T: Send> Queue<T> for LocalQueue<T> {
    async fn push(&self, message: T) -> Result<(), QueueClosed> {
        let sender = self.sender.lock().map_err(|_| QueueClosed)?.clone();
        sender
            .ok_or(QueueClosed)?
            .send(message)
            .map_err(|_| QueueClosed)
    }

    async fn pop(&self) -> Option<T> {
        self.receiver.lock().await.recv().await
    }

    fn close(&self) {
        if let Ok(mut s) = self.sender.lock() {
            s.take();
        }
    }
}
