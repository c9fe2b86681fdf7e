"""The test suite, by area: a folder per layer of the package, the contract and fault suites, and shared helpers."""
