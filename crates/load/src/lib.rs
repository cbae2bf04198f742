//! The load engine of stackbench (to be built, issue "Load engine").
//!
//! It will own the schedules that decide when a request is due (closed model
//! with think time, ramp-up and stages; open model at a rate, latency measured
//! from the intended send time), the transports that send it (HTTP/1.1, h2c,
//! gRPC), and the recorder (one HdrHistogram per worker thread plus a
//! per-second timeline) that turns a run into a `RunRecord`.
