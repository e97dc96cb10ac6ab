//! A prover process for the solver pool: `autoeval-prover [MEMORY_LIMIT_MB]`.

fn main() -> std::io::Result<()> {
    let limit = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(autoeval_solver_pool::DEFAULT_MEMORY_LIMIT_MB);
    autoeval_solver_pool::serve_stdio(limit)
}
