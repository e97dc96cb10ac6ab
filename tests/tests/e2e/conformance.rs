//! The engine's conformance suite, once per transport: the same tests, by
//! the same names, in `in_process` and in `rabbitmq_redis`.

macro_rules! conformance {
    ($transport:ty: $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let _turn = autoeval_e2e::turn(module_path!());
                autoeval_e2e::conformance::suite::$name::<$transport>().await;
            }
        )*
    };
}

macro_rules! suite {
    ($transport:ty) => {
        conformance!($transport:
            a_redelivered_task_is_recorded_once_and_goes_on_once,
            a_delivery_given_back_goes_on_from_the_round_as_stored,
            poison_is_dead_lettered_with_its_reason,
            a_panic_settles_its_own_task_and_the_loop_goes_on,
            shutdown_gives_back_work_not_begun,
            a_halted_backend_leaves_the_rest_pending,
        );
    };
}

mod in_process {
    suite!(autoeval_e2e::conformance::local::InProcess);
}

mod rabbitmq_redis {
    suite!(autoeval_e2e::conformance::fleet::Fleet);
}
