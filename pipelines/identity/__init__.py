"""Identity resolution: source-native model and benchmark names -> canonical ids."""
