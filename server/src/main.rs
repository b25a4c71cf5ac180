/// Small blocks to mimalloc, large ones to the system (`natstudy-allocator`).
#[global_allocator]
static GLOBAL: natstudy_allocator::SizeRouted = natstudy_allocator::SizeRouted;

fn main() -> std::process::ExitCode {
    natstudy::cli::main()
}
