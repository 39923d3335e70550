import os

from hypothesis import HealthCheck, settings

settings.register_profile("lazyarr", max_examples=int(os.environ.get("LAZYARR_TEST_EXAMPLES", "25")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
settings.load_profile("lazyarr")
