import sys
sys.stdin.readline()  # wait until the test has moved us into our cgroup
data = b"x" * (300 << 20)
