"""Development support shared by the tests and the benchmarks: private servers, a fake service. Not shipped."""
