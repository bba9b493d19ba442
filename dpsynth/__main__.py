from dpsynth.cli import main

main()
