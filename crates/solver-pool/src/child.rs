//! The prover process: reads requests on stdin, answers on stdout, under an
//! address-space limit so a runaway check dies alone.

use crate::protocol::{read_frame, write_frame, Request, Response, READY};
use autoeval_verify::{InProcessZ3, Prover};
use std::io::{self, Write};

/// Serves checks until stdin closes. `memory_limit_mb` caps the process's
/// address space (0 leaves it unlimited).
pub fn serve_stdio(memory_limit_mb: u64) -> io::Result<()> {
    if memory_limit_mb > 0 {
        let bytes = memory_limit_mb << 20;
        rlimit::setrlimit(rlimit::Resource::AS, bytes, bytes)?;
    }
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut input = stdin.lock();
    let mut output = stdout.lock();
    output.write_all(READY)?;
    output.flush()?;
    while let Some(req) = read_frame::<Request>(&mut input)? {
        let outcome = InProcessZ3.prove(&req.phi0, &req.phi1, req.limits);
        write_frame(&mut output, &Response::new(&outcome))?;
    }
    Ok(())
}
