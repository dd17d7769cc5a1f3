# The application of Plack's server test suite (Plack::Test::Suite), checked
# by Plack::Middleware::Lint, as suite.t runs it in every actd child. The
# suite's application picks the test case from the X-Plack-Test header, so
# each child can build its own copy.
use Plack::Middleware::Lint;
use Plack::Test::Suite;

Plack::Middleware::Lint->wrap(Plack::Test::Suite->test_app_handler);
