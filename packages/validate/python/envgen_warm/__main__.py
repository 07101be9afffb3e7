from envgen_warm.server import main

main()
