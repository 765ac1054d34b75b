"""The peer toolkits the benchmarks run beside attnlab: their configs and how to run them."""
