// Placeholder until the subcommand table lands.
int main() { return 0; }
