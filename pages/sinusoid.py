import streamlit as st

st.title("sinusoid")
st.info("This page is being built.")
